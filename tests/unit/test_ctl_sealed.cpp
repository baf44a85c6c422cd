// `sealtrainctl sealed ...`: seal, inspect, unseal and rewrap through the command line, the
// refusals an operator meets, and an interop check: an object the command wrote is decoded by a
// small, independent decoder written from docs/formats/sealed.md over plain OpenSSL calls.
#include "ctl_runner.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/key_file.h"

#include <nlohmann/json.hpp>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace sealtrain;

using sealtrain::testing::runCtl;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const std::filesystem::path& path, const Bytes& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// ---- the independent decoder: docs/formats/sealed.md, step by step, raw OpenSSL -------------

std::uint32_t be(const Bytes& b, std::size_t at, std::size_t width)
{
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < width; ++i)
        value = (value << 8U) | b.at(at + i);
    return value;
}

std::optional<Bytes> gcmOpen(const Bytes& key, const Bytes& nonce, const Bytes& aad,
                             const std::uint8_t* data, std::size_t length)
{
    if (length < 16)
        return std::nullopt;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    Bytes out(length - 16);
    int n = 0;
    bool ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nonce.data()) == 1;
    if (ok && !aad.empty())
        ok = EVP_DecryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())) == 1;
    if (ok && !out.empty())
        ok = EVP_DecryptUpdate(ctx, out.data(), &n, data, static_cast<int>(out.size())) == 1;
    Bytes tag(data + out.size(), data + length);
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag.data()) == 1;
    std::uint8_t last[16];
    ok = ok && EVP_DecryptFinal_ex(ctx, last, &n) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        return std::nullopt;
    return out;
}

Bytes hkdfExpandSha512(const Bytes& prk, const Bytes& info, std::size_t length)
{
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    char digest[] = "SHA512";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(prk.data()),
                                          prk.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
                                          const_cast<std::uint8_t*>(info.data()), info.size()),
        OSSL_PARAM_construct_end()};
    Bytes out(length);
    if (EVP_KDF_derive(ctx, out.data(), out.size(), params) != 1)
        qFatal("HKDF failed");
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    return out;
}

std::optional<Bytes> decodeSealed(const Bytes& data, const Bytes& kek)
{
    const std::string magic = "STSEALED";
    if (data.size() < 35 || !std::equal(magic.begin(), magic.end(), data.begin()))
        return std::nullopt;
    if (be(data, 8, 2) != 1 || be(data, 10, 2) != 1 || be(data, 28, 4) != 16384)
        return std::nullopt;
    const Bytes objectId(data.begin() + 12, data.begin() + 28);
    const std::size_t c = data[32];
    const std::size_t m = be(data, 33 + c, 2);
    const std::size_t h = 35 + c + m;
    const Bytes header(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(h));

    const std::size_t k = be(data, h, 2);
    const std::size_t i = data.at(h + 2);
    if (k != 1 + i + 4 + 12 + 48)
        return std::nullopt;
    const Bytes kekId(data.begin() + static_cast<std::ptrdiff_t>(h + 3),
                      data.begin() + static_cast<std::ptrdiff_t>(h + 3 + i));
    const std::uint32_t kekVersion = be(data, h + 3 + i, 4);
    const Bytes wrapNonce(data.begin() + static_cast<std::ptrdiff_t>(h + 7 + i),
                          data.begin() + static_cast<std::ptrdiff_t>(h + 19 + i));
    const std::string label = "sealtrain/sealed-dek/v1";
    Bytes aad(label.begin(), label.end());
    aad.insert(aad.end(), objectId.begin(), objectId.end());
    aad.push_back(static_cast<std::uint8_t>(i));
    aad.insert(aad.end(), kekId.begin(), kekId.end());
    for (int shift = 24; shift >= 0; shift -= 8)
        aad.push_back(static_cast<std::uint8_t>(kekVersion >> shift));
    const auto dek = gcmOpen(kek, wrapNonce, aad, data.data() + h + 19 + i, 48);
    if (!dek)
        return std::nullopt;

    const std::size_t p = h + 2 + k;
    const Bytes salt(data.begin() + static_cast<std::ptrdiff_t>(p),
                     data.begin() + static_cast<std::ptrdiff_t>(p + 24));
    const std::string prefix = "c2sp.org/chunked-encryption@v1+AEAD_AES_256_GCM";
    Bytes info(prefix.begin(), prefix.end());
    info.push_back(0);
    info.insert(info.end(), salt.begin(), salt.end());
    info.insert(info.end(), header.begin(), header.end());
    const Bytes okm = hkdfExpandSha512(*dek, info, 76);
    if (CRYPTO_memcmp(okm.data() + 44, data.data() + p + 24, 32) != 0)
        return std::nullopt;
    const Bytes key(okm.begin(), okm.begin() + 32);
    const Bytes baseNonce(okm.begin() + 32, okm.begin() + 44);

    const std::size_t bodyStart = p + 56;
    const std::size_t n = data.size() - bodyStart;
    if (n % 16400 < 16)
        return std::nullopt;
    const std::size_t count = n / 16400 + 1;
    Bytes plaintext;
    for (std::size_t index = 0; index < count; ++index) {
        Bytes nonce = baseNonce;
        for (std::size_t b = 0; b < 8; ++b)
            nonce[11 - b] ^= static_cast<std::uint8_t>(index >> (8 * b));
        const std::size_t length = index + 1 < count ? 16400 : n % 16400;
        const auto chunk = gcmOpen(key, nonce, {}, data.data() + bodyStart + index * 16400, length);
        if (!chunk)
            return std::nullopt;
        plaintext.insert(plaintext.end(), chunk->begin(), chunk->end());
    }
    return plaintext;
}

// The key bytes of a key file, read per docs/formats/keyfile.md.
Bytes keyFileBytes(const std::filesystem::path& path)
{
    std::ifstream in(path);
    std::string magic;
    std::string id;
    std::string version;
    std::string base64;
    in >> magic >> id >> version >> base64;
    return fromBase64(base64).value();
}

}  // namespace

class TestCtlSealed : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::filesystem::path at(const char* name) const { return dir_.filePath(name).toStdString(); }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        for (const auto& [name, id, version] :
             {std::tuple{"k1", "datasets", 1U}, std::tuple{"k2", "datasets", 2U},
              std::tuple{"impostor", "datasets", 1U}}) {
            auto kek = crypto::generateKek(id, version);
            QVERIFY(kek.ok());
            QVERIFY(crypto::writeKekFile(at(name), *kek).ok());
        }
        Bytes plaintext(50000);
        for (std::size_t i = 0; i < plaintext.size(); ++i)
            plaintext[i] = static_cast<std::uint8_t>(i * 7 + (i >> 8));
        writeFile(at("plain.bin"), plaintext);
    }

    void sealInspectUnseal()
    {
        const auto seal = runCtl({"sealed", "seal", "--key-file", at("k1"), "--metadata",
                                  R"({"dataset":"demo"})", at("plain.bin"), at("obj.sealed")});
        QVERIFY2(seal.code == ctl::kExitOk, seal.err.c_str());

        const auto again =
            runCtl({"sealed", "seal", "--key-file", at("k1"), at("plain.bin"), at("obj.sealed")});
        QCOMPARE(again.code, ctl::kExitFailure);
        QVERIFY(again.err.find("already exists") != std::string::npos);

        const auto inspect = runCtl({"sealed", "inspect", at("obj.sealed")});
        QCOMPARE(inspect.code, ctl::kExitOk);
        QVERIFY(inspect.out.find("datasets version 1") != std::string::npos);
        QVERIFY(inspect.out.find("50000 bytes") != std::string::npos);
        const auto json = runCtl({"sealed", "inspect", "--json", at("obj.sealed")});
        QCOMPARE(json.code, ctl::kExitOk);
        const auto parsed = nlohmann::json::parse(json.out);
        QCOMPARE(parsed.at("kekId").get<std::string>(), std::string("datasets"));
        QCOMPARE(parsed.at("plaintextSize").get<std::uint64_t>(), 50000U);
        QCOMPARE(parsed.at("metadata").get<std::string>(), std::string(R"({"dataset":"demo"})"));
        QCOMPARE(parsed.at("objectId").get<std::string>().size(), 32U);

        const auto unseal =
            runCtl({"sealed", "unseal", "--key-file", at("k1"), at("obj.sealed"), at("out.bin")});
        QVERIFY2(unseal.code == ctl::kExitOk, unseal.err.c_str());
        QVERIFY(readFile(at("out.bin")) == readFile(at("plain.bin")));
        const auto overwrite =
            runCtl({"sealed", "unseal", "--key-file", at("k1"), at("obj.sealed"), at("out.bin")});
        QCOMPARE(overwrite.code, ctl::kExitFailure);
        const auto forced = runCtl({"sealed", "unseal", "--key-file", at("k1"), "--force",
                                    at("obj.sealed"), at("out.bin")});
        QCOMPARE(forced.code, ctl::kExitOk);
    }

    void independentDecoderReadsIt()
    {
        const auto object = readFile(at("obj.sealed"));
        QVERIFY(!object.empty());
        const auto decoded = decodeSealed(object, keyFileBytes(at("k1")));
        QVERIFY(decoded.has_value());
        QVERIFY(*decoded == readFile(at("plain.bin")));
        QVERIFY(!decodeSealed(object, keyFileBytes(at("impostor"))).has_value());
    }

    void refusals()
    {
        // Wrong key file (same id and version, other key): refused, no output file.
        const auto wrong = runCtl(
            {"sealed", "unseal", "--key-file", at("impostor"), at("obj.sealed"), at("w.bin")});
        QCOMPARE(wrong.code, ctl::kExitFailure);
        QVERIFY(wrong.err.find("Cannot unwrap") != std::string::npos);
        QVERIFY(!std::filesystem::exists(at("w.bin")));
        // A key file for another version names both.
        const auto other =
            runCtl({"sealed", "unseal", "--key-file", at("k2"), at("obj.sealed"), at("w.bin")});
        QCOMPARE(other.code, ctl::kExitFailure);
        QVERIFY(other.err.find("version 2") != std::string::npos);
        // A tampered chunk: refused, and nothing written (not even the chunks before it).
        auto object = readFile(at("obj.sealed"));
        object[object.size() - 20000] ^= 0x01;
        writeFile(at("tampered.sealed"), object);
        const auto tampered = runCtl(
            {"sealed", "unseal", "--key-file", at("k1"), at("tampered.sealed"), at("t.bin")});
        QCOMPARE(tampered.code, ctl::kExitFailure);
        QVERIFY(tampered.err.find("does not authenticate") != std::string::npos);
        QVERIFY(!std::filesystem::exists(at("t.bin")));
        // Not a sealed object.
        const auto notSealed = runCtl({"sealed", "inspect", at("plain.bin")});
        QCOMPARE(notSealed.code, ctl::kExitFailure);
        // Usage errors.
        QCOMPARE(runCtl({"sealed", "seal", at("plain.bin"), at("x")}).code, ctl::kExitUsage);
        QCOMPARE(runCtl({"sealed"}).code, ctl::kExitUsage);
    }

    void rewrapRotates()
    {
        QVERIFY(std::filesystem::copy_file(at("obj.sealed"), at("rot.sealed")));
        const auto rewrap = runCtl({"sealed", "rewrap", "--key-file", at("k1"), "--new-key-file",
                                    at("k2"), at("rot.sealed")});
        QVERIFY2(rewrap.code == ctl::kExitOk, rewrap.err.c_str());
        const auto json =
            nlohmann::json::parse(runCtl({"sealed", "inspect", "--json", at("rot.sealed")}).out);
        QCOMPARE(json.at("kekVersion").get<int>(), 2);
        QCOMPARE(
            runCtl({"sealed", "unseal", "--key-file", at("k1"), at("rot.sealed"), at("r1.bin")})
                .code,
            ctl::kExitFailure);
        QCOMPARE(
            runCtl({"sealed", "unseal", "--key-file", at("k2"), at("rot.sealed"), at("r2.bin")})
                .code,
            ctl::kExitOk);
        QVERIFY(readFile(at("r2.bin")) == readFile(at("plain.bin")));
        const auto decoded = decodeSealed(readFile(at("rot.sealed")), keyFileBytes(at("k2")));
        QVERIFY(decoded.has_value() && *decoded == readFile(at("plain.bin")));
    }
};

QTEST_APPLESS_MAIN(TestCtlSealed)
#include "test_ctl_sealed.moc"
