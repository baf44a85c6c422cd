// The keys of a job's ranks on a cluster (node/node_keys.h, issue #27 item 19): sealed to each
// node's key and signed by the worker, so that what Slurm forwards between nodes in clear gives
// nothing away and can not be swapped. Each attack a node or the network could try is refused:
// another node's key, an altered or truncated bundle, another signer, a node left out.
#include "sealtrain/node/node_keys.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>
#include <string>

using namespace sealtrain;

namespace {

crypto::SecretBytes secretOf(const std::string& text)
{
    return crypto::SecretBytes::fromBytes(
               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()})
        .value();
}

std::string textOf(const crypto::SecretBytes& bytes)
{
    return {reinterpret_cast<const char*>(bytes.bytes().data()), bytes.size()};
}

}  // namespace

class TestCoreNodeKeys : public QObject {
    Q_OBJECT

private slots:
    void eachNodeOpensItsOwnKeys();
    void attacksAreRefused();
    void nodeKeysFolderIsChecked();
};

void TestCoreNodeKeys::eachNodeOpensItsOwnKeys()
{
    auto a = crypto::BoxKeyPair::generate().value();
    auto b = crypto::BoxKeyPair::generate().value();
    const auto worker = crypto::SigningKey::generate().value();
    const std::vector<node::NodeKey> nodes{{"node-a", a.publicKey()}, {"node-b", b.publicKey()}};
    const std::string keys = "trainer keys\nwith a secret line\n";
    auto bundle = node::sealNodeKeys(nodes, secretOf(keys), worker);
    QVERIFY2(bundle, bundle ? "" : bundle.error().message().c_str());
    // The bundle names the nodes, never the keys.
    QVERIFY(bundle->find("secret") == std::string::npos);
    QVERIFY(bundle->starts_with("sealtrain-node-keys v1\nnode node-a "));
    for (const auto& [name, key] : {std::pair{"node-a", &a}, std::pair{"node-b", &b}}) {
        auto opened = node::openNodeKeys(*bundle, name, *key, worker.publicKey());
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
        QCOMPARE(textOf(*opened), keys);
    }
    // A node name twice, or one that is not a name, is refused when sealing.
    const std::vector<node::NodeKey> twice{{"node-a", a.publicKey()}, {"node-a", b.publicKey()}};
    QVERIFY(!node::sealNodeKeys(twice, secretOf(keys), worker));
    const std::vector<node::NodeKey> odd{{"../etc", a.publicKey()}};
    QVERIFY(!node::sealNodeKeys(odd, secretOf(keys), worker));
}

void TestCoreNodeKeys::attacksAreRefused()
{
    auto a = crypto::BoxKeyPair::generate().value();
    auto b = crypto::BoxKeyPair::generate().value();
    const auto worker = crypto::SigningKey::generate().value();
    const auto other = crypto::SigningKey::generate().value();
    const std::vector<node::NodeKey> nodes{{"node-a", a.publicKey()}, {"node-b", b.publicKey()}};
    const std::string bundle = node::sealNodeKeys(nodes, secretOf("k"), worker).value();

    // Node b's key does not open node a's box.
    auto wrongKey = node::openNodeKeys(bundle, "node-a", b, worker.publicKey());
    QVERIFY(!wrongKey);
    QCOMPARE(wrongKey.error().code(), ErrorCode::Unauthenticated);
    // A node the worker did not seal for gets nothing.
    auto absent = node::openNodeKeys(bundle, "node-c", a, worker.publicKey());
    QVERIFY(!absent);
    QCOMPARE(absent.error().code(), ErrorCode::NotFound);
    // Signed by someone else: refused before any box is opened.
    const std::string forged = node::sealNodeKeys(nodes, secretOf("k"), other).value();
    auto notTheWorker = node::openNodeKeys(forged, "node-a", a, worker.publicKey());
    QVERIFY(!notTheWorker);
    QCOMPARE(notTheWorker.error().code(), ErrorCode::Integrity);
    // Every single altered byte, and every truncation, is refused.
    for (std::size_t at = 0; at < bundle.size(); at += 7) {
        std::string altered = bundle;
        altered[at] = static_cast<char>(altered[at] ^ 0x01);
        auto opened = node::openNodeKeys(altered, "node-a", a, worker.publicKey());
        QVERIFY2(!opened, qPrintable(QString("byte %1 altered").arg(at)));
        auto cut = node::openNodeKeys(std::string_view(bundle).substr(0, at), "node-a", a,
                                      worker.publicKey());
        QVERIFY2(!cut, qPrintable(QString("cut at %1").arg(at)));
    }
    // A node's box moved under another node's name (by someone who can not sign) is refused.
    std::string swapped = bundle;
    const auto lineA = swapped.find("node node-a ");
    swapped.replace(lineA, 12, "node node-b ");
    QVERIFY(!node::openNodeKeys(swapped, "node-b", b, worker.publicKey()));
}

void TestCoreNodeKeys::nodeKeysFolderIsChecked()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path folder = tmp.path().toStdString();
    auto none = node::readNodeKeys(folder);
    QVERIFY(!none);
    QCOMPARE(none.error().code(), ErrorCode::NotFound);
    std::ofstream(folder / "node-b.pub") << std::string(64, 'b') << "\n";
    std::ofstream(folder / "node-a.pub") << std::string(64, 'a') << "\n";
    std::ofstream(folder / "README") << "ignored\n";
    auto keys = node::readNodeKeys(folder);
    QVERIFY2(keys, keys ? "" : keys.error().message().c_str());
    QCOMPARE(keys->size(), std::size_t{2});
    QCOMPARE(keys->front().node, std::string("node-a"));
    QCOMPARE(keys->front().publicKey[0], std::uint8_t{0xaa});
    std::ofstream(folder / "node-c.pub") << "not hex\n";
    auto bad = node::readNodeKeys(folder);
    QVERIFY(!bad);
    QCOMPARE(bad.error().code(), ErrorCode::InvalidArgument);
    QVERIFY(bad.error().message().find("node-c.pub") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestCoreNodeKeys)
#include "test_node_keys.moc"
