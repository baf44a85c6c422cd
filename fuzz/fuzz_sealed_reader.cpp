// libFuzzer target: SealedReader and inspectSealedObject on arbitrary bytes. Seeds are valid
// objects under the fuzz KEK (make_fuzz_seeds), so mutations reach every parsing and chunk path.
// Any crash, sanitizer report or plaintext released from an unverified chunk is a bug.
#include "fuzz_keys.h"

#include "sealtrain/crypto/sealed.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace sealtrain::crypto;
    static const Kek kek = sealtrain::fuzz::fuzzKek();
    static const KekResolver resolver = [](const std::string& id,
                                           std::uint32_t version) -> sealtrain::Result<const Kek*> {
        if (id != kek.id || version != kek.version)
            return sealtrain::Error(sealtrain::ErrorCode::NotFound, "No such KEK.");
        return &kek;
    };

    sealtrain::MemorySource source(std::span<const std::uint8_t>(data, size));
    (void)inspectSealedObject(source);
    auto reader = SealedReader::open(source, resolver);
    if (!reader)
        return 0;
    // Open succeeded, so the plaintext size is authenticated: every read must stay inside it.
    sealtrain::fuzz::DiscardSink sink;
    const bool complete = reader->readAll(sink).ok();
    if (complete && sink.total != reader->plaintextSize())
        std::abort();
    if (sink.total > reader->plaintextSize())
        std::abort();
    std::vector<std::uint8_t> chunk(16384);
    const std::uint64_t last = reader->chunkCount() - 1;
    (void)reader->readChunk(last, chunk);
    (void)reader->readChunk(last / 2, chunk);
    std::vector<std::uint8_t> range(
        static_cast<std::size_t>(std::min<std::uint64_t>(reader->plaintextSize(), 70000)));
    (void)reader->read(reader->plaintextSize() - range.size(), range);
    return 0;
}
