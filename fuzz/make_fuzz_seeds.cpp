// Writes the fuzz targets' seed corpora (fuzz_seeds.h).
// Usage: make_fuzz_seeds SEALED_DIR CHUNKED_DIR FORMATS_DIR TEXT_DIR RECORDS_DIR
#include "fuzz_seeds.h"

#include <cstdio>

int main(int argc, char** argv)
{
    if (argc != 6) {
        std::fprintf(stderr, "usage: make_fuzz_seeds SEALED_DIR CHUNKED_DIR FORMATS_DIR TEXT_DIR "
                             "RECORDS_DIR\n");
        return 2;
    }
    if (!sealtrain::fuzz::writeCipherSeeds(argv[1], argv[2])) {
        std::fprintf(stderr, "make_fuzz_seeds: the sealed or chunked seeds could not be made\n");
        return 1;
    }
    if (!sealtrain::fuzz::writeFormatSeeds(argv[3])) {
        std::fprintf(stderr, "make_fuzz_seeds: the trainer formats' seeds could not be made\n");
        return 1;
    }
    if (!sealtrain::fuzz::writeStructuredTextSeeds(argv[4])) {
        std::fprintf(stderr, "make_fuzz_seeds: the structured text seeds could not be made\n");
        return 1;
    }
    if (!sealtrain::fuzz::writeDatasetRecordSeeds(argv[5])) {
        std::fprintf(stderr, "make_fuzz_seeds: the dataset record seeds could not be made\n");
        return 1;
    }
    return 0;
}
