// base/byte_io: atomic writes (nothing partial is ever seen, the requested mode, refusing to
// replace), whole-file reads with their size guard, EINTR-safe writes and the file source's
// bounds. Every layer writes its files through these.
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"

#include <QtTest/QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <thread>

using namespace sealtrain;
namespace fs = std::filesystem;

namespace {

unsigned modeOf(const fs::path& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return 0;
    return static_cast<unsigned>(info.st_mode & 07777);
}

std::size_t entriesIn(const fs::path& folder)
{
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

}  // namespace

class TestByteIo : public QObject {
    Q_OBJECT

private slots:
    // Each test function works in a folder of its own.
    void init()
    {
        QVERIFY(dir_.isValid());
        root_ = fs::path(dir_.path().toStdString()) / QTest::currentTestFunction();
        fs::create_directory(root_);
    }

    void atomicWriteAndRead()
    {
        const auto path = root_ / "file";
        QVERIFY(
            writeFileAtomically(path, asBytes("first"), AtomicFileSink::Overwrite::Refuse).ok());
        QCOMPARE(*readWholeFile(path), std::string("first"));
        QCOMPARE(modeOf(path), 0600U);
        QCOMPARE(entriesIn(root_), std::size_t{1});  // no temporary file is left behind
    }

    // Public files (a CA certificate, a public key) are written 0644; secrets stay 0600.
    void atomicWriteWithMode()
    {
        const auto path = root_ / "public.pem";
        QVERIFY(writeFileAtomically(path, asBytes("pem"), AtomicFileSink::Overwrite::Refuse, 0644)
                    .ok());
        QCOMPARE(modeOf(path), 0644U);
    }

    void refusesToReplaceUnlessAllowed()
    {
        const auto path = root_ / "file";
        QVERIFY(writeFileAtomically(path, asBytes("old"), AtomicFileSink::Overwrite::Refuse).ok());
        const auto refused =
            writeFileAtomically(path, asBytes("new"), AtomicFileSink::Overwrite::Refuse);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::AlreadyExists);
        QCOMPARE(*readWholeFile(path), std::string("old"));
        QVERIFY(writeFileAtomically(path, asBytes("new"), AtomicFileSink::Overwrite::Allow).ok());
        QCOMPARE(*readWholeFile(path), std::string("new"));
    }

    // A writer that fails before commit leaves the previous file as it was and no temporary.
    void uncommittedWriteLeavesTheOldFile()
    {
        const auto path = root_ / "file";
        QVERIFY(writeFileAtomically(path, asBytes("old"), AtomicFileSink::Overwrite::Refuse).ok());
        {
            auto sink = AtomicFileSink::create(path, AtomicFileSink::Overwrite::Allow);
            QVERIFY(sink.ok());
            QVERIFY((*sink)->write(asBytes("half of the new")).ok());
        }
        QCOMPARE(*readWholeFile(path), std::string("old"));
        QCOMPARE(entriesIn(root_), std::size_t{1});
    }

    void readErrorsNameTheFile()
    {
        const auto missing = readWholeFile(root_ / "missing");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code(), ErrorCode::NotFound);
        QVERIFY(missing.error().message().find("missing") != std::string::npos);
        QVERIFY(isOneSentence(missing.error().message()));

        const auto folder = readWholeFile(root_);
        QVERIFY(!folder.ok());
        QCOMPARE(folder.error().code(), ErrorCode::InvalidArgument);
    }

    void readGuardsItsSize()
    {
        const auto path = root_ / "big";
        QVERIFY(writeFileAtomically(path, asBytes(std::string(100, 'x')),
                                    AtomicFileSink::Overwrite::Refuse)
                    .ok());
        QVERIFY(readWholeFile(path, 100).ok());
        const auto tooBig = readWholeFile(path, 99);
        QVERIFY(!tooBig.ok());
        QCOMPARE(tooBig.error().code(), ErrorCode::InvalidArgument);
    }

    // writeAll delivers every byte through a pipe smaller than the data (short writes).
    void writeAllThroughAPipe()
    {
        std::array<int, 2> fds{};
        QCOMPARE(::pipe(fds.data()), 0);
        const std::string data(200'000, 'p');
        std::string received;
        std::thread reader([&] {
            std::array<char, 4096> buffer{};
            ssize_t got = 0;
            while ((got = ::read(fds[0], buffer.data(), buffer.size())) > 0)
                received.append(buffer.data(), static_cast<std::size_t>(got));
        });
        const auto written = writeAll(fds[1], asBytes(data), "pipe");
        ::close(fds[1]);
        reader.join();
        ::close(fds[0]);
        QVERIFY(written.ok());
        QCOMPARE(received.size(), data.size());
        QVERIFY(received == data);
    }

    void sourceRefusesReadsPastItsEnd()
    {
        const auto path = root_ / "short";
        QVERIFY(writeFileAtomically(path, asBytes("0123456789"), AtomicFileSink::Overwrite::Refuse)
                    .ok());
        auto source = FileSource::open(path);
        QVERIFY(source.ok());
        std::array<std::uint8_t, 4> out{};
        QVERIFY((*source)->readAt(6, out).ok());
        QCOMPARE(out[0], std::uint8_t{'6'});
        const auto past = (*source)->readAt(7, out);
        QVERIFY(!past.ok());
        QCOMPARE(past.error().code(), ErrorCode::Integrity);
    }

    void syncFolderReportsAMissingFolder()
    {
        QVERIFY(syncFolder(root_).ok());
        const auto missing = syncFolder(root_ / "absent");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code(), ErrorCode::NotFound);
    }

private:
    QTemporaryDir dir_;
    fs::path root_;
};

QTEST_APPLESS_MAIN(TestByteIo)
#include "test_base_byte_io.moc"
