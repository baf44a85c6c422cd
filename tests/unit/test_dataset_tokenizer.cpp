// Dataset tokenizers and PII screening (issue #6): byte-level round trips, GPT-2's
// pre-tokenisation pattern, BPE merges in rank order against a hand-made vocab/merges pair, and
// each PII kind with its near misses.
#include "sealtrain/dataset/pii.h"
#include "sealtrain/dataset/tokenizer.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

using namespace sealtrain;
using namespace sealtrain::dataset;

namespace {

// GPT-2's printable byte alphabet for ASCII: ' ' is U+0120 ("Ġ"), the other printable ASCII
// bytes stand for themselves.
std::string handMadeVocab()
{
    std::string json = "{";
    int id = 0;
    // Every byte needs a symbol: printable bytes stand for themselves, others are U+0100 + n.
    std::vector<std::string> symbols;
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable =
            (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const int cp = printable ? b : 256 + shifted++;
        std::string utf8;
        if (cp < 0x80) {
            utf8.push_back(static_cast<char>(cp));
        } else {
            utf8.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            utf8.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        symbols.push_back(utf8);
    }
    for (const char* extra :
         {"he", "ll", "llo", "hello", "\xC4\xA0w", "\xC4\xA0wo", "<|endoftext|>"})
        symbols.emplace_back(extra);
    for (const auto& symbol : symbols) {
        std::string escaped;
        for (const char c : symbol) {
            if (c == '"' || c == '\\')
                escaped.push_back('\\');
            if (static_cast<unsigned char>(c) < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned char>(c));
                escaped += buffer;
                continue;
            }
            escaped.push_back(c);
        }
        json += (id == 0 ? "\"" : ",\"") + escaped + "\":" + std::to_string(id);
        ++id;
    }
    return json + "}";
}

}  // namespace

class TestDatasetTokenizer final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::filesystem::path vocab_;
    std::filesystem::path merges_;

    void write(const std::filesystem::path& path, const std::string& text)
    {
        std::ofstream(path, std::ios::binary) << text;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        vocab_ = std::filesystem::path(dir_.path().toStdString()) / "vocab.json";
        merges_ = std::filesystem::path(dir_.path().toStdString()) / "merges.txt";
        write(vocab_, handMadeVocab());
        // Ranks in file order: "l l", "h e", "ll o", "he llo", so "hello" ends as one symbol
        // while "hell" stops at "he" "ll".
        write(merges_, "#version: 0.2\nl l\nh e\nll o\nhe llo\n\xC4\xA0 w\n\xC4\xA0w o\n");
    }

    void byteRoundTrip()
    {
        ByteTokenizer tokenizer;
        QCOMPARE(tokenizer.info().vocabSize, 256U);
        QCOMPARE(tokenizer.info().endOfText.value(), 0U);
        const std::string text = "h\xC3\xA9llo\n";
        std::vector<std::uint32_t> ids;
        tokenizer.encode(text, ids);
        QCOMPARE(ids, (std::vector<std::uint32_t>{104, 0xC3, 0xA9, 108, 108, 111, 10}));
        QCOMPARE(tokenizer.decode(ids).value(), text);
        const std::vector<std::uint32_t> bad{300};
        QCOMPARE(tokenizer.decode(bad).error().code(), ErrorCode::InvalidArgument);
    }

    void preTokenize_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("pieces");
        QTest::newRow("words") << "Hello world" << QStringList{"Hello", " world"};
        QTest::newRow("contractions")
            << "I'm here, they'll go"
            << QStringList{"I", "'m", " here", ",", " they", "'ll", " go"};
        QTest::newRow("numbers") << "abc123 45" << QStringList{"abc", "123", " 45"};
        QTest::newRow("spaces before word") << "a   b" << QStringList{"a", "  ", " b"};
        QTest::newRow("trailing spaces") << "a  " << QStringList{"a", "  "};
        QTest::newRow("newline") << "a\n\nb" << QStringList{"a", "\n", "\n", "b"};
        QTest::newRow("symbols") << "x?!  y" << QStringList{"x", "?!", " ", " y"};
        QTest::newRow("unicode letters")
            << QString::fromUtf8("caf\u00e9 \u4e2d\u6587")
            << QStringList{QString::fromUtf8("caf\u00e9"), QString::fromUtf8(" \u4e2d\u6587")};
        QTest::newRow("unicode digits") << QString::fromUtf8("\u0663\u0664x")
                                        << QStringList{QString::fromUtf8("\u0663\u0664"), "x"};
        QTest::newRow("quote run") << "''s" << QStringList{"''", "s"};
    }

    void preTokenize()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, pieces);
        const std::string utf8 = text.toStdString();
        QStringList got;
        for (const auto piece : gpt2PreTokenize(utf8))
            got << QString::fromStdString(std::string(piece));
        QCOMPARE(got, pieces);
    }

    void bpeMerges()
    {
        auto tokenizer = Gpt2BpeTokenizer::load(vocab_, merges_);
        QVERIFY2(tokenizer.ok(), tokenizer.ok() ? "" : tokenizer.error().message().c_str());
        const TokenizerInfo& info = (*tokenizer)->info();
        QCOMPARE(info.id, std::string("gpt2-bpe"));
        QCOMPARE(info.vocabSize, 263U);
        QCOMPARE(info.endOfText.value(), 262U);
        QCOMPARE(info.fileSha256.size(), std::size_t{2});
        std::vector<std::uint32_t> ids;
        (*tokenizer)->encode("hello world", ids);
        // hello -> 259 ("hello"); " world" -> "Ġwo"(261) r l d.
        QCOMPARE(ids, (std::vector<std::uint32_t>{259, 261, 'r', 'l', 'd'}));
        QCOMPARE((*tokenizer)->decode(ids).value(), std::string("hello world"));
        ids.clear();
        (*tokenizer)->encode("hell", ids);
        QCOMPARE(ids, (std::vector<std::uint32_t>{256, 257}));  // "he" "ll"
        ids.clear();
        const std::string text = "\xE2\x82\xAC 1\t\n x";
        (*tokenizer)->encode(text, ids);
        QCOMPARE((*tokenizer)->decode(ids).value(), text);
    }

    void bpeRefusesBadFiles()
    {
        const auto badMerges = std::filesystem::path(dir_.path().toStdString()) / "bad.txt";
        write(badMerges, "q z\n");
        std::filesystem::path badVocab =
            std::filesystem::path(dir_.path().toStdString()) / "v.json";
        write(badVocab, "[1,2]");
        auto unknownSymbol = Gpt2BpeTokenizer::load(vocab_, badMerges);
        QCOMPARE(unknownSymbol.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(unknownSymbol.error().message()));
        QCOMPARE(Gpt2BpeTokenizer::load(badVocab, merges_).error().code(),
                 ErrorCode::InvalidArgument);
        QCOMPARE(Gpt2BpeTokenizer::load(vocab_.string() + ".missing", merges_).error().code(),
                 ErrorCode::NotFound);
        // A vocabulary naming an id far past its size is refused before a table of that many
        // symbols is made (here 2^31 - 1: 64 GB, which would end this test).
        write(badVocab, R"({"a": 0, "b": 2147483647})");
        auto sparse = Gpt2BpeTokenizer::load(badVocab, merges_);
        QCOMPARE(sparse.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(sparse.error().message().find("gaps") != std::string::npos,
                 sparse.error().message().c_str());
        // Two symbols with one id, the count otherwise right, says so.
        write(badVocab, R"({"a": 0, "b": 0, "c": 2})");
        auto twice = Gpt2BpeTokenizer::load(badVocab, merges_);
        QCOMPARE(twice.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(twice.error().message().find("same id") != std::string::npos,
                 twice.error().message().c_str());
    }

    void pii_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("kinds");
        QTest::addColumn<QString>("redacted");
        QTest::newRow("email") << "mail bob.smith+x@mail.example.org." << QStringList{"email"}
                               << "mail [EMAIL].";
        QTest::newRow("not email") << "a@b or x@y.z" << QStringList{} << "a@b or x@y.z";
        QTest::newRow("ssn") << "SSN 123-45-6789 ok" << QStringList{"ssn"} << "SSN [SSN] ok";
        QTest::newRow("bad ssn area") << "666-45-6789" << QStringList{} << "666-45-6789";
        QTest::newRow("card luhn")
            << "card 4111 1111 1111 1111 end" << QStringList{"card"} << "card [CARD] end";
        QTest::newRow("card fails luhn")
            << "4111 1111 1111 1112" << QStringList{} << "4111 1111 1111 1112";
        QTest::newRow("phone") << "call (555) 123-4567 now" << QStringList{"phone"}
                               << "call [PHONE] now";
        QTest::newRow("phone intl") << "+44 20 7946 0958" << QStringList{"phone"} << "[PHONE]";
        QTest::newRow("ip") << "host 192.168.1.20 up" << QStringList{"ip"} << "host [IP] up";
        QTest::newRow("not ip") << "version 1.2.3.4.5 and 300.1.1.1" << QStringList{}
                                << "version 1.2.3.4.5 and 300.1.1.1";
        QTest::newRow("ipv6 full") << "from 2001:0db8:85a3:0000:0000:8a2e:0370:7334 ok"
                                   << QStringList{"ip"} << "from [IP] ok";
        QTest::newRow("ipv6 compressed")
            << "gw fe80::1, dns 2001:db8::53 and ::1." << QStringList{"ip", "ip", "ip"}
            << "gw [IP], dns [IP] and [IP].";
        QTest::newRow("ipv6 with ipv4 tail")
            << "mapped ::ffff:192.0.2.128 here" << QStringList{"ip"} << "mapped [IP] here";
        QTest::newRow("ipv6 in brackets")
            << "[2001:db8::7]:443" << QStringList{"ip"} << "[[IP]]:443";
        QTest::newRow("not ipv6")
            << "at 12:30:45, mac 00:1a:2b:3c:4d:5e, std::map, dead::beef, 1:2:3:4:5:6:7:8:9"
            << QStringList{}
            << "at 12:30:45, mac 00:1a:2b:3c:4d:5e, std::map, dead::beef, 1:2:3:4:5:6:7:8:9";
        QTest::newRow("two double colons") << "2001::db8::1" << QStringList{} << "2001::db8::1";
        QTest::newRow("year is fine")
            << "In 1999 we had 12 cats" << QStringList{} << "In 1999 we had 12 cats";
        QTest::newRow("mixed") << "a@b.co 10.0.0.1 078-05-1120" << QStringList{"email", "ip", "ssn"}
                               << "[EMAIL] [IP] [SSN]";
    }

    void pii()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, kinds);
        QFETCH(QString, redacted);
        const std::string utf8 = text.toStdString();
        const auto matches = findPii(utf8);
        QStringList got;
        for (const auto& match : matches)
            got << piiKindName(match.kind);
        QCOMPARE(got, kinds);
        QCOMPARE(QString::fromStdString(redactPii(utf8, matches)), redacted);
    }
};

QTEST_APPLESS_MAIN(TestDatasetTokenizer)
#include "test_dataset_tokenizer.moc"
