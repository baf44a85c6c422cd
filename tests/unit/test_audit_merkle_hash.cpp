// RFC 6962 hashing: the empty root, leaf and node domain separation, known values.
#include "sealtrain/audit/merkle_hash.h"

#include <QtTest/QtTest>

using sealtrain::audit::Hash;

namespace {

QByteArray hex(const Hash& hash)
{
    return QByteArray(reinterpret_cast<const char*>(hash.data()),
                      static_cast<qsizetype>(hash.size()))
        .toHex();
}

}  // namespace

class TestMerkleHash : public QObject {
    Q_OBJECT

private slots:
    void emptyRootIsSha256OfNothing()
    {
        QCOMPARE(hex(sealtrain::audit::emptyTreeRoot()),
                 QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    }

    void leafOfEmptyEntry()
    {
        // RFC 6962 reference value (also transparency-dev's): SHA-256(0x00).
        QCOMPARE(hex(sealtrain::audit::leafHash({})),
                 QByteArray("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"));
    }

    void nodeOfTwoLeaves()
    {
        // The root of the two-leaf tree whose leaves are "" and "\x00", the first two leaves of
        // the certificate-transparency reference test data.
        const std::uint8_t second[] = {0x00};
        const Hash root = sealtrain::audit::nodeHash(sealtrain::audit::leafHash({}),
                                                     sealtrain::audit::leafHash(second));
        QCOMPARE(hex(root),
                 QByteArray("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"));
    }

    void leafIsNotANode()
    {
        // Domain separation: hashing the 64-byte concatenation as a leaf differs from the node.
        const Hash a = sealtrain::audit::leafHash(std::vector<std::uint8_t>{1});
        const Hash b = sealtrain::audit::leafHash(std::vector<std::uint8_t>{2});
        std::vector<std::uint8_t> concatenated(a.begin(), a.end());
        concatenated.insert(concatenated.end(), b.begin(), b.end());
        QVERIFY(sealtrain::audit::leafHash(concatenated) != sealtrain::audit::nodeHash(a, b));
    }
};

QTEST_APPLESS_MAIN(TestMerkleHash)
#include "test_audit_merkle_hash.moc"
