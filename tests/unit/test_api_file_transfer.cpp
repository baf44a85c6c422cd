// The one upload and one download helper of api/ (api/file_transfer.h), without a server: what a
// sender sends arrives whole, and a receiver refuses a stream that names a file twice, names one
// that is not plain, sends more or fewer bytes than it declared, or sends bytes before a name, and
// keeps nothing of a file cut short.
#include "file_transfer.h"

#include "sealtrain/v1/control.pb.h"
#include "sealtrain/v1/registry.pb.h"

#include <QtTest/QtTest>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace sealtrain;
using sealtrain::v1::FileChunk;

namespace {

void writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

FileChunk named(const std::string& name, std::uint64_t size)
{
    FileChunk chunk;
    chunk.set_name(name);
    chunk.set_size(size);
    return chunk;
}

FileChunk data(const std::string& bytes)
{
    FileChunk chunk;
    chunk.set_data(bytes);
    return chunk;
}

// Receives `chunks` into `folder`, at most 4 files and 8 MiB.
Result<std::vector<std::filesystem::path>> receive(const std::vector<FileChunk>& chunks,
                                                   const std::filesystem::path& folder)
{
    std::size_t next = 0;
    return api::transfer::receiveFiles(
        folder, 4, 8U << 20U,
        [&](FileChunk& chunk) {
            if (next == chunks.size())
                return false;
            chunk = chunks[next++];
            return true;
        },
        [](const FileChunk&) { return success(); });
}

}  // namespace

class TestApiFileTransfer : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
        root_ = std::filesystem::path(dir_->path().toStdString());
        std::filesystem::create_directory(root_ / "in");
    }

    void filesArriveWholeInChunksOfAtMostOneMiB()
    {
        const std::string big(api::transfer::kChunkBytes * 2 + 17, 'x');
        writeFile(root_ / "a.sealed", big);
        writeFile(root_ / "b.json", "{}");
        writeFile(root_ / "empty", "");
        std::vector<FileChunk> sent;
        FileChunk first;
        first.mutable_attempt()->set_job(7);
        auto done =
            api::transfer::sendFiles({root_ / "a.sealed", root_ / "b.json", root_ / "empty"}, first,
                                     [&](const FileChunk& chunk) {
                                         sent.push_back(chunk);
                                         return true;
                                     });
        QVERIFY(done);
        QCOMPARE(sent.front().attempt().job(), 7);  // the first chunk carries what `first` does
        QVERIFY(!sent.at(1).has_attempt());
        for (const FileChunk& chunk : sent)
            QVERIFY(chunk.data().size() <= api::transfer::kChunkBytes);
        auto got = receive(sent, root_ / "in");
        QVERIFY2(got, got ? "" : got.error().message().c_str());
        QCOMPARE(got->size(), std::size_t{3});
        QCOMPARE(readFile(root_ / "in" / "a.sealed"), big);
        QCOMPARE(readFile(root_ / "in" / "b.json"), std::string("{}"));
        QVERIFY(std::filesystem::exists(root_ / "in" / "empty"));
    }

    void sendingStopsWhenTheReceiverGoesAway()
    {
        writeFile(root_ / "a", "abc");
        int writes = 0;
        auto done = api::transfer::sendEach<FileChunk>(
            {{root_ / "a", "a", std::nullopt}},
            [](FileChunk& chunk, const std::string& name, std::uint64_t size) {
                chunk.set_name(name);
                chunk.set_size(size);
            },
            [&](const FileChunk&) { return ++writes < 2; });
        QVERIFY(done);
        QVERIFY(!*done);  // the receiver's status says why
        QCOMPARE(writes, 2);
    }

    // An import announces the size it measured when it listed its files: a file that shrank since
    // arrives short of it, and the receiver keeps nothing of it.
    void aFileThatChangedSinceItWasMeasuredIsRefused()
    {
        writeFile(root_ / "a", "abc");
        std::vector<FileChunk> sent;
        auto done = api::transfer::sendEach<FileChunk>(
            {{root_ / "a", "a", 1000}},
            [](FileChunk& chunk, const std::string& name, std::uint64_t size) {
                chunk.set_name(name);
                chunk.set_size(size);
            },
            [&](const FileChunk& chunk) {
                sent.push_back(chunk);
                return true;
            });
        QVERIFY(done && *done);
        QCOMPARE(sent.front().size(), std::uint64_t{1000});
        auto got = receive(sent, root_ / "in");
        QVERIFY(!got);
        QVERIFY(got.error().message().find("3 of 1000 bytes") != std::string::npos);
        QVERIFY(!std::filesystem::exists(root_ / "in" / "a"));
    }

    void anUnreadableFileIsNamed()
    {
        auto done = api::transfer::sendEach<FileChunk>(
            {{root_ / "missing", "missing", std::nullopt}},
            [](FileChunk&, const std::string&, std::uint64_t) {},
            [](const FileChunk&) { return true; });
        QVERIFY(!done);
        QVERIFY(done.error().message().find("missing") != std::string::npos);
    }

    void aStreamThatBreaksTheRulesIsRefused_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("a name twice") << 0;
        QTest::newRow("a name that is not plain") << 1;
        QTest::newRow("more bytes than declared") << 2;
        QTest::newRow("fewer bytes than declared") << 3;
        QTest::newRow("bytes before a name") << 4;
        QTest::newRow("more files than allowed") << 5;
        QTest::newRow("a hidden name") << 6;
    }

    void aStreamThatBreaksTheRulesIsRefused()
    {
        QFETCH(int, which);
        const std::vector<std::vector<FileChunk>> streams = {
            {named("a", 1), data("x"), named("a", 1), data("y")},
            {named("../a", 1), data("x")},
            {named("a", 1), data("xy")},
            {named("a", 1), data("x"), named("b", 3), data("y")},
            {data("x"), named("a", 1), data("x")},
            {named("f1", 0), named("f2", 0), named("f3", 0), named("f4", 0), named("f5", 0)},
            {named(".a", 1), data("x")},
        };
        auto got = receive(streams.at(static_cast<std::size_t>(which)), root_ / "in");
        QVERIFY(!got);
        QVERIFY(!std::filesystem::exists(root_ / "in" / "b"));  // a file cut short is not kept
        QVERIFY(!std::filesystem::exists(root_ / "a"));         // nothing outside the folder
    }

    void anExportStreamUsesTheSameHelper()
    {
        std::vector<v1::ExportChunk> chunks(2);
        chunks[0].set_name("model.safetensors");
        chunks[0].set_size(3);
        chunks[0].set_folder_digest("sha256:00");
        chunks[1].set_data("abc");
        std::size_t next = 0;
        std::string digest;
        auto got = api::transfer::receiveFiles<v1::ExportChunk>(
            root_ / "in", 4, 1U << 20U,
            [&](v1::ExportChunk& chunk) {
                if (next == chunks.size())
                    return false;
                chunk = chunks[next++];
                return true;
            },
            [&](const v1::ExportChunk& first) {
                digest = first.folder_digest();
                return success();
            });
        QVERIFY(got);
        QCOMPARE(digest, std::string("sha256:00"));
        QCOMPARE(readFile(root_ / "in" / "model.safetensors"), std::string("abc"));
    }

private:
    std::unique_ptr<QTemporaryDir> dir_;
    std::filesystem::path root_;
};

QTEST_APPLESS_MAIN(TestApiFileTransfer)
#include "test_api_file_transfer.moc"
