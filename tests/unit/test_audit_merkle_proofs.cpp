// The Merkle tree and its proofs: every transparency-dev/merkle vector (inclusion, consistency,
// subtree inclusion; valid and malformed), and proofs the tree makes for every small size.
#include "sealtrain/audit/merkle_tree.h"
#include "sealtrain/audit/proof.h"

#include "testvectors.h"

#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <fstream>

using sealtrain::audit::Hash;
namespace audit = sealtrain::audit;

namespace {

// The leaves of RFC 6962's reference tree, which transparency-dev's vectors are built from.
std::vector<std::vector<std::uint8_t>> referenceLeaves()
{
    return {{},
            {0x00},
            {0x10},
            {0x20, 0x21},
            {0x30, 0x31},
            {0x40, 0x41, 0x42, 0x43},
            {0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57},
            {0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d,
             0x6e, 0x6f}};
}

// RFC 6962's MTH written straight from its recursive definition, to check the tree against.
Hash naiveRoot(const std::vector<Hash>& leaves, std::size_t begin, std::size_t end)
{
    if (end == begin)
        return audit::emptyTreeRoot();
    if (end - begin == 1)
        return leaves[begin];
    std::size_t split = 1;
    while (split * 2 < end - begin)
        split *= 2;
    return audit::nodeHash(naiveRoot(leaves, begin, begin + split),
                           naiveRoot(leaves, begin + split, end));
}

Hash leafNumber(std::uint64_t i)
{
    std::vector<std::uint8_t> bytes(8);
    for (std::size_t b = 0; b < 8; ++b)
        bytes[b] = static_cast<std::uint8_t>(i >> (8 * b));
    return audit::leafHash(bytes);
}

nlohmann::json readJson(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

// A vector's proof: null, or an array of base64 hashes; nullopt when one is not a hash.
std::optional<std::vector<Hash>> proofOf(const nlohmann::json& value)
{
    std::vector<Hash> proof;
    if (value.is_null())
        return proof;
    for (const auto& node : value) {
        auto hash = audit::hashFromBase64(node.get<std::string>());
        if (!hash)
            return std::nullopt;
        proof.push_back(*hash);
    }
    return proof;
}

// Runs one vector file through the verifier; true when the verifier accepted it.
bool acceptsInclusion(const nlohmann::json& v, bool subtree)
{
    const auto root = audit::hashFromBase64(v["root"].get<std::string>());
    const auto leaf = audit::hashFromBase64(v["leafHash"].get<std::string>());
    const auto proof = proofOf(v["proof"]);
    if (!root || !leaf || !proof)
        return false;  // refused when parsed, as the bundle parser refuses it
    const auto index = v["leafIdx"].get<std::uint64_t>();
    if (subtree)
        return audit::verifySubtreeInclusion(index, v["start"].get<std::uint64_t>(),
                                             v["end"].get<std::uint64_t>(), *leaf, *proof, *root)
            .ok();
    return audit::verifyInclusion(index, v["treeSize"].get<std::uint64_t>(), *leaf, *proof, *root)
        .ok();
}

bool acceptsConsistency(const nlohmann::json& v)
{
    const auto root1 = audit::hashFromBase64(v["root1"].get<std::string>());
    const auto root2 = audit::hashFromBase64(v["root2"].get<std::string>());
    const auto proof = proofOf(v["proof"]);
    if (!root1 || !root2 || !proof)
        return false;
    return audit::verifyConsistency(v["size1"].get<std::uint64_t>(),
                                    v["size2"].get<std::uint64_t>(), *proof, *root1, *root2)
        .ok();
}

// The one vector we answer differently, on purpose: its two "roots" are the same 12-byte string
// ("don't care 2"), which the Go reference accepts because it only compares bytes when the
// sizes are equal. A root is a 32-byte hash in every format we read, so ours refuses it when
// parsing, like any other malformed hash (docs/formats/audit.md, "Conformance").
bool isStricterThanReference(const std::filesystem::path& file)
{
    return file.filename() == "sizes-are-equal-one-and-proof-is-empty.json";
}

}  // namespace

class TestMerkleProofs : public QObject {
    Q_OBJECT

private slots:
    void vectors_data()
    {
        QTest::addColumn<QString>("kind");
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "merkle/testdata");
        for (const char* kind : {"inclusion", "consistency", "subtreeinclusion"})
            QTest::newRow(kind) << QString::fromLatin1(kind);
    }

    // One row per kind; every file in the folder is checked and counted, with its name in the
    // failure message.
    void vectors()
    {
        QFETCH(QString, kind);
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "merkle/testdata");
        int checked = 0;
        int valid = 0;
        for (const auto& file :
             std::filesystem::recursive_directory_iterator(dir / kind.toStdString())) {
            if (!file.is_regular_file() || file.path().extension() != ".json")
                continue;
            const auto v = readJson(file.path());
            const bool wantError = v["wantErr"].get<bool>();
            bool accepted = false;
            if (kind == "consistency")
                accepted = acceptsConsistency(v);
            else
                accepted = acceptsInclusion(v, kind == "subtreeinclusion");
            const std::string what = file.path().string();
            if (isStricterThanReference(file.path())) {
                QVERIFY2(!accepted, what.c_str());
                ++checked;
                continue;
            }
            QVERIFY2(accepted != wantError, what.c_str());
            ++checked;
            valid += wantError ? 0 : 1;
        }
        QVERIFY(checked > 50);
        QVERIFY(valid > 3);
    }

    // The vectors' happy paths are over RFC 6962's reference leaves: the tree must make exactly
    // their proofs and roots.
    void treeMakesTheVectorsProofs()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "merkle/testdata");
        audit::MerkleTree tree;
        for (const auto& leaf : referenceLeaves())
            tree.append(audit::leafHash(leaf));
        int compared = 0;
        for (int n = 0; n <= 4; ++n) {
            const auto inclusion =
                readJson(dir / "inclusion" / std::to_string(n) / "happy-path.json");
            const auto index = inclusion["leafIdx"].get<std::uint64_t>();
            const auto size = inclusion["treeSize"].get<std::uint64_t>();
            const auto proof = tree.inclusionProof(index, size);
            QVERIFY(proof.ok());
            QCOMPARE(*proof, *proofOf(inclusion["proof"]));
            QCOMPARE(*tree.rootAt(size),
                     *audit::hashFromBase64(inclusion["root"].get<std::string>()));
            QCOMPARE(tree.leaf(index),
                     *audit::hashFromBase64(inclusion["leafHash"].get<std::string>()));

            const auto consistency =
                readJson(dir / "consistency" / std::to_string(n) / "happy-path.json");
            const auto size1 = consistency["size1"].get<std::uint64_t>();
            const auto size2 = consistency["size2"].get<std::uint64_t>();
            const auto made = tree.consistencyProof(size1, size2);
            QVERIFY(made.ok());
            QCOMPARE(*made, *proofOf(consistency["proof"]));
            ++compared;
        }
        QCOMPARE(compared, 5);
    }

    void compactRangeMatchesDefinition()
    {
        std::vector<Hash> leaves;
        audit::CompactRange range;
        audit::MerkleTree tree;
        QCOMPARE(range.root(), audit::emptyTreeRoot());
        for (std::uint64_t i = 0; i < 300; ++i) {
            leaves.push_back(leafNumber(i));
            range.append(leaves.back());
            tree.append(leaves.back());
            const Hash expected = naiveRoot(leaves, 0, leaves.size());
            QCOMPARE(range.root(), expected);
            QCOMPARE(*tree.rootAt(leaves.size()), expected);
        }
        QCOMPARE(range.size(), std::uint64_t{300});
    }

    void everySmallProofVerifies()
    {
        audit::MerkleTree tree;
        for (std::uint64_t i = 0; i < 70; ++i)
            tree.append(leafNumber(i));
        for (std::uint64_t size = 1; size <= tree.size(); ++size) {
            const Hash root = *tree.rootAt(size);
            for (std::uint64_t index = 0; index < size; ++index) {
                const auto proof = tree.inclusionProof(index, size);
                QVERIFY(proof.ok());
                QVERIFY(audit::verifyInclusion(index, size, tree.leaf(index), *proof, root).ok());
                // The same proof does not place the leaf anywhere else.
                if (size > 1)
                    QVERIFY(!audit::verifyInclusion((index + 1) % size, size, tree.leaf(index),
                                                    *proof, root)
                                 .ok());
            }
            for (std::uint64_t size1 = 1; size1 <= size; ++size1) {
                const auto proof = tree.consistencyProof(size1, size);
                QVERIFY(proof.ok());
                const Hash root1 = *tree.rootAt(size1);
                QVERIFY(audit::verifyConsistency(size1, size, *proof, root1, root).ok());
                if (size1 < size) {
                    Hash wrong = root1;
                    wrong[0] ^= 1U;
                    QVERIFY(!audit::verifyConsistency(size1, size, *proof, wrong, root).ok());
                }
            }
        }
    }

    void refusesImpossibleRequests()
    {
        audit::MerkleTree tree;
        tree.append(leafNumber(0));
        QVERIFY(!tree.inclusionProof(1, 1).ok());
        QVERIFY(!tree.inclusionProof(0, 2).ok());
        QVERIFY(!tree.consistencyProof(0, 1).ok());
        QVERIFY(!tree.consistencyProof(1, 2).ok());
        QVERIFY(!tree.rootAt(2).ok());
        QVERIFY(!audit::hashFromBase64("AAAA").ok());
    }
};

QTEST_APPLESS_MAIN(TestMerkleProofs)
#include "test_audit_merkle_proofs.moc"
