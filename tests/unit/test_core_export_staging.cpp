// An export staged for its download (core/registry/exports/staging.h, issue #48): what is read back
// is what was built, piece by piece; nothing of the plaintext is on disk; a staged file changed,
// cut or swapped for another is refused; the folder goes with the object, and with a failure.
#include "sealtrain/core/registry/exports/staging.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <fstream>
#include <iterator>

using namespace sealtrain;

namespace {

std::vector<std::uint8_t> pattern(std::size_t size, std::uint8_t seed)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::uint8_t>((i * 131 + seed) % 251);
    return bytes;
}

core::ExportFolder sampleFolder()
{
    return {{{"model.safetensors", pattern(200'000, 7)},
             {"config.json", pattern(4096, 1)},
             {"empty.txt", {}},
             {"vocab.json", pattern(5000, 2)},
             {"merges.txt", pattern(5000, 3)},
             {"model.sig", pattern(3, 9)}},
            "sha256:abc"};
}

Result<std::vector<std::uint8_t>> readBack(const core::StagedExport& staged, std::size_t index,
                                           std::size_t piece, std::size_t* pieces = nullptr)
{
    std::vector<std::uint8_t> out;
    std::size_t count = 0;
    auto read = staged.read(index, piece, [&](std::span<const std::uint8_t> got) {
        if (got.size() > piece)
            return false;
        out.insert(out.end(), got.begin(), got.end());
        ++count;
        return true;
    });
    if (!read)
        return read.error();
    if (pieces != nullptr)
        *pieces = count;
    return out;
}

std::vector<std::filesystem::path> filesUnder(const std::filesystem::path& root)
{
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.is_regular_file())
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<std::uint8_t> contentOf(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class TestExportStaging : public QObject {
    Q_OBJECT

private slots:
    void readsBackWhatWasBuiltPieceByPiece()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        const core::ExportFolder expected = sampleFolder();
        auto staged = core::StagedExport::stage(sampleFolder(), root);
        QVERIFY2(staged, staged ? "" : staged.error().message().c_str());
        QCOMPARE(staged->digest(), std::string("sha256:abc"));
        QCOMPARE(staged->files().size(), expected.files.size());
        for (std::size_t i = 0; i < expected.files.size(); ++i) {
            QCOMPARE(staged->files()[i].name, expected.files[i].name);
            QCOMPARE(staged->files()[i].size, std::uint64_t{expected.files[i].bytes.size()});
            for (const std::size_t piece : {std::size_t{1000}, std::size_t{4096}, kBig}) {
                std::size_t pieces = 0;
                auto back = readBack(*staged, i, piece, &pieces);
                QVERIFY2(back, back ? "" : back.error().message().c_str());
                QCOMPARE(*back, expected.files[i].bytes);
                const std::size_t size = expected.files[i].bytes.size();
                QCOMPARE(pieces, std::max<std::size_t>(1, (size + piece - 1) / piece));
            }
        }
        // The folder is private to the daemon's user.
        QCOMPARE(std::filesystem::status(root).permissions(), std::filesystem::perms::owner_all);
    }

    void noPlaintextOnDisk()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        auto staged = core::StagedExport::stage(sampleFolder(), root);
        QVERIFY(staged);
        const auto files = filesUnder(root);
        QCOMPARE(files.size(), std::size_t{6});
        const std::vector<std::uint8_t> needle = pattern(64, 7);
        for (const auto& file : files) {
            const auto content = contentOf(file);
            QVERIFY2(std::search(content.begin(), content.end(), needle.begin(), needle.end())
                         == content.end(),
                     file.c_str());
            QVERIFY(file.filename().string().find("model") == std::string::npos);
        }
    }

    void changedCutOrSwappedFilesAreRefused()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        auto staged = core::StagedExport::stage(sampleFolder(), root);
        QVERIFY(staged);
        const auto files = filesUnder(root);  // 0.sealed … 5.sealed
        // One byte flipped in the middle of the weights.
        {
            std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(100'000);
            char byte = 0;
            f.seekg(100'000);
            f.get(byte);
            f.seekp(100'000);
            f.put(static_cast<char>(byte ^ 1));
        }
        auto flipped = readBack(*staged, 0, 4096);
        QVERIFY(!flipped);
        QCOMPARE(flipped.error().code(), ErrorCode::Integrity);
        // config.json cut short.
        std::filesystem::resize_file(files[1], std::filesystem::file_size(files[1]) - 20);
        auto cut = readBack(*staged, 1, 4096);
        QVERIFY(!cut);
        QCOMPARE(cut.error().code(), ErrorCode::Integrity);
        // merges.txt replaced by the staged vocab.json, of the same length: bound to another
        // name, refused.
        std::filesystem::copy_file(files[3], files[4],
                                   std::filesystem::copy_options::overwrite_existing);
        auto swapped = readBack(*staged, 4, 4096);
        QVERIFY(!swapped);
        QCOMPARE(swapped.error().code(), ErrorCode::Integrity);
        // model.sig replaced by the staged empty.txt: refused.
        std::filesystem::copy_file(files[2], files[5],
                                   std::filesystem::copy_options::overwrite_existing);
        auto emptied = readBack(*staged, 5, 4096);
        QVERIFY(!emptied);
        QCOMPARE(emptied.error().code(), ErrorCode::Integrity);
    }

    void anotherStagingsKeyDoesNotOpenIt()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        auto first = core::StagedExport::stage(sampleFolder(), root);
        auto second = core::StagedExport::stage(sampleFolder(), root);
        QVERIFY(first && second);
        auto files = filesUnder(root);
        QCOMPARE(files.size(), std::size_t{12});
        // The same file of the two downloads differs on disk: a fresh key each.
        QVERIFY(contentOf(files[0]) != contentOf(files[6]));
        // The second's model.sig put in place of the first's: refused.
        std::filesystem::copy_file(files[11], files[5],
                                   std::filesystem::copy_options::overwrite_existing);
        // Whichever download's folder sorted first now holds the other's file: it alone fails.
        QVERIFY(readBack(*first, 5, 4096).ok() != readBack(*second, 5, 4096).ok());
    }

    void theFolderGoesWithTheObjectAndMoves()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        {
            auto staged = core::StagedExport::stage(sampleFolder(), root);
            QVERIFY(staged);
            core::StagedExport moved = std::move(staged).value();
            QCOMPARE(filesUnder(root).size(), std::size_t{6});
            auto back = readBack(moved, 0, 65536);
            QVERIFY(back);
            QCOMPARE(back->size(), std::size_t{200'000});
        }
        QVERIFY(std::filesystem::is_empty(root));
    }

    void anUnusableDownloadsFolderIsNamed()
    {
        QTemporaryDir dir;
        // downloads/ is a file: nothing can be staged, and the caller is told where.
        const std::filesystem::path root = dir.filePath("downloads").toStdString();
        std::ofstream(root) << "x";
        auto staged = core::StagedExport::stage(sampleFolder(), root);
        QVERIFY(!staged);
        QCOMPARE(staged.error().code(), ErrorCode::Io);
        QVERIFY(staged.error().message().find("downloads") != std::string::npos);
    }

private:
    static constexpr std::size_t kBig = std::size_t{1} << 20;
};

QTEST_APPLESS_MAIN(TestExportStaging)
#include "test_core_export_staging.moc"
