// Writes the fuzz targets' seed corpora: valid sealed objects under the fuzz KEK and valid
// chunked ciphertexts under the fuzz key (context "fuzz", and raw mode), at the sizes around the
// chunk boundaries. Usage: make_fuzz_seeds SEALED_DIR CHUNKED_DIR
#include "fuzz_keys.h"

#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/sealed.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace sealtrain::crypto;

namespace {

void save(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: make_fuzz_seeds SEALED_DIR CHUNKED_DIR\n");
        return 2;
    }
    const std::filesystem::path sealedDir = argv[1];
    const std::filesystem::path chunkedDir = argv[2];
    std::filesystem::create_directories(sealedDir);
    std::filesystem::create_directories(chunkedDir);
    const Kek kek = sealtrain::fuzz::fuzzKek();
    const std::uint8_t context[] = {'f', 'u', 'z', 'z'};
    const GcmNonce baseNonce{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    for (const std::size_t size : {0UL, 1UL, 100UL, 16383UL, 16384UL, 16385UL, 40000UL}) {
        std::vector<std::uint8_t> message(size);
        for (std::size_t i = 0; i < size; ++i)
            message[i] = static_cast<std::uint8_t>(i * 31);
        const std::string name = "size-" + std::to_string(size);

        sealtrain::MemorySink sealed;
        auto writer = SealedWriter::create(sealed, kek, {"application/octet-stream", "{}"});
        if (!writer || !writer->write(message) || !writer->finish())
            return 1;
        save(sealedDir / name, sealed.bytes());

        sealtrain::MemorySink chunked;
        auto keyed = ChunkedWriter::create(kek.key, context, chunked);
        if (!keyed || !keyed->write(message) || !keyed->finish())
            return 1;
        save(chunkedDir / name, chunked.bytes());

        sealtrain::MemorySink raw;
        auto rawWriter = ChunkedWriter::createRaw(kek.key, baseNonce, raw);
        if (!rawWriter || !rawWriter->write(message) || !rawWriter->finish())
            return 1;
        save(chunkedDir / (name + "-raw"), raw.bytes());
    }
    return 0;
}
