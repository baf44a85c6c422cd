// libFuzzer target: the C2SP chunked-encryption reader (keyed and raw mode) on arbitrary bytes,
// through readAll, the stream, random access and length authentication.
#include "fuzz_keys.h"

#include "sealtrain/crypto/chunked.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

using sealtrain::fuzz::DiscardSink;

void exercise(sealtrain::crypto::ChunkedReader& reader)
{
    using namespace sealtrain::crypto;
    DiscardSink sink;
    const bool complete = reader.readAll(sink).ok();
    if (sink.total > reader.plaintextSize() || (complete && sink.total != reader.plaintextSize()))
        std::abort();
    ChunkedStream stream(reader);
    std::vector<std::uint8_t> piece(5000);
    std::uint64_t streamed = 0;
    for (;;) {
        auto got = stream.read(piece);
        if (!got) {
            if (stream.read(piece).ok())
                std::abort();  // an error must stick
            break;
        }
        if (*got == 0)
            break;
        streamed += *got;
    }
    if (streamed > reader.plaintextSize())
        std::abort();
    (void)reader.authenticateLength();
    std::vector<std::uint8_t> range(
        static_cast<std::size_t>(std::min<std::uint64_t>(reader.plaintextSize(), 20000)));
    (void)reader.read(0, range);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace sealtrain::crypto;
    static const Kek kek = sealtrain::fuzz::fuzzKek();
    const std::span<const std::uint8_t> input(data, size);
    sealtrain::MemorySource source(input);
    const std::uint8_t context[] = {'f', 'u', 'z', 'z'};
    if (auto reader = ChunkedReader::open(kek.key, context, source))
        exercise(*reader);
    const GcmNonce baseNonce{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    if (auto raw = ChunkedReader::openRaw(kek.key, baseNonce, source))
        exercise(*raw);
    return 0;
}
