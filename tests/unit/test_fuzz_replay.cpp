// The fuzz targets (fuzz/) replayed in the ordinary test run, without clang or libFuzzer: each
// target's seeds (fuzz_seeds.h), and damaged copies of each — prefixes at many lengths, single
// bytes changed, bytes appended — and hand-made hostile model files go through the same entry
// point libFuzzer calls. The targets' own checks abort on a broken promise (a truncated file
// accepted, a tensor outside the input, a file that does not read back the same), which fails
// this test; in the sanitizer build ASan and UBSan watch every read and allocation too.
#include "fuzz_dataset_records.h"
#include "fuzz_seeds.h"
#include "fuzz_trainer_formats.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/structured_text.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/pii.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/base_model.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors_reader.h"

#include <nlohmann/json.hpp>

#include <QtTest/QtTest>

#include <cstring>
#include <fstream>
#include <functional>

// The targets' LLVMFuzzerTestOneInput, renamed for this test (tests/CMakeLists.txt).
extern "C" int replaySealedReader(const std::uint8_t* data, std::size_t size);
extern "C" int replayChunkedReader(const std::uint8_t* data, std::size_t size);
extern "C" int replayTrainerFormats(const std::uint8_t* data, std::size_t size);
extern "C" int replayStructuredText(const std::uint8_t* data, std::size_t size);
extern "C" int replayDatasetRecords(const std::uint8_t* data, std::size_t size);

using namespace sealtrain;

namespace {

using Bytes = std::vector<std::uint8_t>;
using Entry = int (*)(const std::uint8_t*, std::size_t);

Bytes readBytes(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// `seed` and damaged copies of it: every prefix up to 64 bytes and 64 more spread over the rest,
// one byte changed two ways at 128 places spread over it, and bytes appended.
std::vector<Bytes> variants(const Bytes& seed)
{
    std::vector<Bytes> out{seed};
    const std::size_t size = seed.size();
    for (std::size_t length = 0; length < std::min<std::size_t>(size, 64); ++length)
        out.emplace_back(seed.begin(), seed.begin() + static_cast<std::ptrdiff_t>(length));
    for (std::size_t i = 1; size > 64 && i <= 64; ++i) {
        const std::size_t length = 64 + (size - 64) * i / 65;
        out.emplace_back(seed.begin(), seed.begin() + static_cast<std::ptrdiff_t>(length));
    }
    for (std::size_t i = 0; size > 0 && i < 128; ++i) {
        const std::size_t at = size * i / 128;
        for (const std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
            Bytes changed = seed;
            changed[at] ^= flip;
            out.push_back(std::move(changed));
        }
    }
    Bytes longer = seed;
    longer.push_back('x');
    out.push_back(longer);
    longer.resize(seed.size() + 4096, 0);
    out.push_back(std::move(longer));
    return out;
}

// Every variant of every seed in `folder` through `entry`; how many inputs ran.
std::size_t replay(const std::filesystem::path& folder, Entry entry)
{
    std::size_t inputs = 0;
    for (const auto& file : std::filesystem::directory_iterator(folder))
        for (const Bytes& input : variants(readBytes(file.path()))) {
            (void)entry(input.data(), input.size());
            ++inputs;
        }
    return inputs;
}

Bytes forReader(fuzz::FormatReader reader, std::string_view text)
{
    Bytes input(text.size() + 1);
    input[0] = static_cast<std::uint8_t>(reader);
    std::copy(text.begin(), text.end(), input.begin() + 1);
    return input;
}

// A safetensors file of `header` (JSON) and `data` bytes.
std::string safetensors(const nlohmann::json& header, std::size_t data)
{
    const std::string json = header.dump();
    std::string bytes(8, '\0');
    const std::uint64_t length = json.size();
    std::memcpy(bytes.data(), &length, sizeof length);
    return bytes + json + std::string(data, '\0');
}

// A checkpoint plaintext whose metadata records `config` and whose `count` tensors hold one
// element each.
std::string claimingCheckpoint(const trainer::TrainingConfig& config, std::size_t count)
{
    nlohmann::json header{{"__metadata__",
                           {{"format", trainer::kCheckpointFormat},
                            {"config", config.toJson()},
                            {"step", "1"},
                            {"optimizer_step", "1"},
                            {"loader", R"({"epoch":0,"index":0})"},
                            {"run", "claims"},
                            {"job", "1"},
                            {"dataset", "sha256:" + std::string(64, 'd')},
                            {"tokenizer", "byte"}}}};
    for (std::size_t i = 0; i < count; ++i)
        header["t" + std::to_string(i)] = {
            {"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4 * i, 4 * i + 4}}};
    return safetensors(header, 4 * count);
}

}  // namespace

class TestFuzzReplay : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    [[nodiscard]] std::filesystem::path folder(const char* name) const
    {
        return std::filesystem::path(dir_.path().toStdString()) / name;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        QVERIFY(fuzz::writeCipherSeeds(folder("sealed"), folder("chunked")));
        QVERIFY(fuzz::writeFormatSeeds(folder("formats")));
        QVERIFY(fuzz::writeStructuredTextSeeds(folder("text")));
        QVERIFY(fuzz::writeDatasetRecordSeeds(folder("records")));
    }

    void sealedReader() { QVERIFY(replay(folder("sealed"), replaySealedReader) > 2000); }

    void chunkedReader() { QVERIFY(replay(folder("chunked"), replayChunkedReader) > 4000); }

    void trainerFormats()
    {
        // Every reader has a seed, and each seed is accepted as it is (else the damaged copies
        // would test only the first refusal).
        QCOMPARE(std::distance(std::filesystem::directory_iterator(folder("formats")),
                               std::filesystem::directory_iterator()),
                 std::ptrdiff_t{8});
        const Bytes safetensorsSeed = readBytes(folder("formats") / "safetensors");
        QVERIFY(trainer::decodeSafetensors(std::span(safetensorsSeed).subspan(1)));
        const Bytes checkpoint = readBytes(folder("formats") / "checkpoint");
        QVERIFY(trainer::decodeCheckpoint(std::span(checkpoint).subspan(1)));
        const Bytes lineage = readBytes(folder("formats") / "lineage");
        QVERIFY(trainer::parseLineageStatement(std::string_view(
            reinterpret_cast<const char*>(lineage.data()) + 1, lineage.size() - 1)));
        const Bytes tokenizer = readBytes(folder("formats") / "tokenizer");
        const std::string files(tokenizer.begin() + 1, tokenizer.end());
        const auto split = files.find('\0');
        QVERIFY(dataset::Gpt2BpeTokenizer::fromText(
            files.substr(0, split),
            files.substr(split + 1, files.find('\0', split + 1) - split - 1)));
        QVERIFY(replay(folder("formats"), replayTrainerFormats) > 2000);
    }

    // Job specs: the seeds are read, and their damaged copies and hostile shapes are read within
    // the bounds or refused — nesting as deep as a spec may be long (64 KiB) in YAML and JSON,
    // a "billion laughs", thousands of values.
    void structuredText()
    {
        for (const char* name : {"spec.yaml", "spec.json"}) {
            const Bytes seed = readBytes(folder("text") / name);
            QVERIFY2(
                parseStructuredText(
                    std::string_view(reinterpret_cast<const char*>(seed.data()), seed.size()), {}),
                name);
        }
        QVERIFY(replay(folder("text"), replayStructuredText) > 600);
        std::string laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
        for (int level = 1; level <= 9; ++level) {
            laughs += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
            for (int i = 0; i < 9; ++i)
                laughs += (i == 0 ? "*a" : ", *a") + std::to_string(level - 1);
            laughs += "]\n";
        }
        std::string wide = "values: [";
        for (int i = 0; i < 20000; ++i)
            wide += i == 0 ? "1" : ",1";
        wide += "]";
        const std::string texts[] = {
            std::string(65536, '['),
            std::string(32768, '[') + std::string(32768, ']'),
            "{\"a\": " + std::string(65536, '['),
            std::string(32768, '{'),
            [] {
                std::string nested;
                for (int i = 0; i < 20000; ++i)
                    nested += "- ";
                return nested + "x";
            }(),
            "a:\n" +
                [] {
                    std::string nested;
                    for (int i = 1; i < 3000; ++i)
                        nested += std::string(static_cast<std::size_t>(i), ' ') + "- \n";
                    return nested;
                }(),
            laughs,
            wide,
            "{\"values\": [" + wide.substr(wide.find('[') + 1) + "}",
        };
        for (const std::string& text : texts) {
            QVERIFY(!parseStructuredText(text, {}));
            (void)replayStructuredText(reinterpret_cast<const std::uint8_t*>(text.data()),
                                       text.size());
        }
    }

    // Uploads in every dataset format: the seeds (one per format, each holding PII the screen
    // finds), their damaged copies, and hostile rows — a CSV row of commas, a quoted field of
    // escaped quotes, JSON lines nested 4,000 deep (inside the line limit) and a million deep,
    // unbroken digits and addresses for the PII screen — read within the record limit, hashed
    // whole.
    void datasetRecords()
    {
        QCOMPARE(std::distance(std::filesystem::directory_iterator(folder("records")),
                               std::filesystem::directory_iterator()),
                 std::ptrdiff_t{fuzz::kRecordFormats});
        const Bytes text = readBytes(folder("records") / "text-files");
        QVERIFY(dataset::findPii(std::string_view(reinterpret_cast<const char*>(text.data()) + 1,
                                                  text.size() - 1))
                    .size()
                >= 6);
        QVERIFY(replay(folder("records"), replayDatasetRecords) > 1000);
        const auto upload = [](dataset::InputFormat format, const std::string& file) {
            Bytes input(file.size() + 1);
            input[0] = static_cast<std::uint8_t>(format);
            std::copy(file.begin(), file.end(), input.begin() + 1);
            return input;
        };
        std::string digits;
        for (int i = 0; i < 50000; ++i)
            digits += "4111 1111 1111 1111 1";
        std::string addresses;
        for (int i = 0; i < 20000; ++i)
            addresses += "fe80::1:a@b.co:10.0.0.1.";
        const std::pair<dataset::InputFormat, std::string> files[] = {
            {dataset::InputFormat::Csv, "text,other\nx," + std::string(1000000, ',') + "\n"},
            {dataset::InputFormat::Csv, "text,other\nx,\"" + std::string(1000000, '"') + "\"\n"},
            {dataset::InputFormat::Csv, std::string(1000000, ',') + "text\n"},
            {dataset::InputFormat::Jsonl, "{\"text\": " + std::string(4000, '[') + "\n"},
            {dataset::InputFormat::Jsonl, std::string(1000000, '[') + "\n"},
            {dataset::InputFormat::TextFiles, digits},
            {dataset::InputFormat::TextRecords, addresses},
            {dataset::InputFormat::Fortune, std::string(100000, '\n') + "%"},
        };
        for (const auto& [format, file] : files) {
            const Bytes input = upload(format, file);
            (void)replayDatasetRecords(input.data(), input.size());
        }
        // The screen itself, over a record far past the fuzz limit: matches in order, apart.
        const auto matches = dataset::findPii(digits + addresses);
        QVERIFY(!matches.empty());
        for (std::size_t i = 1; i < matches.size(); ++i)
            QVERIFY(matches[i].offset >= matches[i - 1].offset + matches[i - 1].length);
    }

    // A number the build writes as an unsigned integer, read back as a float, a negative number
    // or one past 2^64 (the fuzzer found total_steps 2.2e112, whose conversion was undefined
    // behaviour): refused, with nothing converted (UBSan, in CI's sanitizer build, fails the test
    // otherwise).
    void wholeNumbersOutOfRange()
    {
        trainer::TrainingConfig config;
        config.model = {8, 20, 1, 64, 2, 8};
        config.batch = 2;
        const std::string written = config.toJson();
        QVERIFY(trainer::TrainingConfig::fromJson(written));
        const std::string steps = "\"total_steps\":" + std::to_string(config.schedule.totalSteps);
        QVERIFY(written.find(steps) != std::string::npos);
        trainer::CheckpointLineage lineage;
        lineage.subject = {"checkpoint-1", std::string(64, 'a')};
        lineage.job = "job-1";
        lineage.run = "run-1";
        lineage.step = 7;
        lineage.configSha256 = std::string(64, 'b');
        lineage.dataset = "sha256:" + std::string(64, 'c');
        const std::string statement = trainer::lineageStatement(lineage);
        QVERIFY(trainer::parseLineageStatement(statement));
        for (const char* number : {"2.2e112", "-1", "1.5", "18446744073709551616", "1e3"}) {
            std::string text = written;
            text.replace(text.find(steps), steps.size(), std::string("\"total_steps\":") + number);
            QVERIFY2(!trainer::TrainingConfig::fromJson(text), number);
            std::string other = statement;
            const auto at = other.find("\"step\":7");
            QVERIFY(at != std::string::npos);
            other.replace(at, 8, std::string("\"step\":") + number);
            QVERIFY2(!trainer::parseLineageStatement(other), number);
        }
    }

    // Files made to claim more than they hold: each is refused, and nothing is allocated for
    // the claim (an allocation of the claimed size would end the test).
    void hostileModelFiles()
    {
        const std::vector<std::pair<const char*, std::string>> files{
            {"a header length of 2^62", std::string("\0\0\0\0\0\0\0\x40", 8) + "{}"},
            {"a tensor of 2^32 x 2^32 elements",
             safetensors({{"w",
                           {{"dtype", "F32"},
                            {"shape", {4294967296ULL, 4294967296ULL}},
                            {"data_offsets", {0, 16}}}}},
                         16)},
            {"a tensor past the data",
             safetensors({{"w", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}}},
                         8)},
            {"two tensors overlapping",
             safetensors({{"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
                          {"b", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {4, 12}}}}},
                         12)},
        };
        for (const auto& [what, bytes] : files) {
            QVERIFY2(!trainer::decodeSafetensors(asBytes(bytes)), what);
            for (const auto reader :
                 {fuzz::FormatReader::Safetensors, fuzz::FormatReader::BaseModelImport,
                  fuzz::FormatReader::Checkpoint}) {
                const Bytes input = forReader(reader, bytes);
                (void)replayTrainerFormats(input.data(), input.size());
            }
        }
        // A checkpoint whose recorded configuration claims about 2·10^13 parameters, with as
        // many tensors as that model has, each of one element: refused before its layout is
        // allocated. And one claiming 2^40 layers: refused before its layout is made.
        trainer::TrainingConfig huge;
        huge.model = {1, 64, 1, 1024, 1, 40000};
        huge.batch = 1;
        QVERIFY(huge.model.validate());
        const std::size_t tensors = 3 * trainer::ParameterLayout(huge.model).tensors().size();
        QVERIFY(!trainer::decodeCheckpoint(asBytes(claimingCheckpoint(huge, tensors))));
        huge.model.layers = std::size_t{1} << 40U;
        QVERIFY(!huge.model.validate());
        QVERIFY(!trainer::decodeCheckpoint(asBytes(claimingCheckpoint(huge, 3))));
        for (const std::size_t count : {tensors, std::size_t{3}}) {
            const Bytes input =
                forReader(fuzz::FormatReader::Checkpoint, claimingCheckpoint(huge, count));
            (void)replayTrainerFormats(input.data(), input.size());
        }

        // An imported config.json of 256 layers 46,336 wide (about 6.6·10^12 parameters) beside
        // a model.safetensors of one tensor: refused before the parameters are allocated.
        const std::string config =
            R"({"model_type": "gpt2", "activation_function": "gelu_new",)"
            R"( "layer_norm_epsilon": 1e-5, "scale_attn_weights": true,)"
            R"( "scale_attn_by_inverse_layer_idx": false, "reorder_and_upcast_attn": false,)"
            R"( "tie_word_embeddings": true, "vocab_size": 1, "n_positions": 1,)"
            R"( "n_embd": 46336, "n_layer": 256, "n_head": 1})";
        QVERIFY(trainer::parseGpt2Config(config));
        const std::string tiny = safetensors(
            {{"wte.weight", {{"dtype", "F32"}, {"shape", {1, 1}}, {"data_offsets", {0, 4}}}}}, 4);
        auto imported = trainer::prepareBaseModel(config, asBytes(tiny));
        QVERIFY(!imported);
        QCOMPARE(imported.error().code(), ErrorCode::Integrity);
        // A tokenizer's vocab.json naming an id far past its size: refused before its table.
        QVERIFY(!dataset::Gpt2BpeTokenizer::fromText(R"({"a": 0, "b": 2147483647})", ""));
        const Bytes sparse = forReader(fuzz::FormatReader::BpeTokenizer,
                                       std::string(R"({"b": 2147483647})") + '\0' + '\0' + "x");
        (void)replayTrainerFormats(sparse.data(), sparse.size());
        // A vocabulary of 10^12 tokens is refused outright.
        QVERIFY(!trainer::parseGpt2Config(
            R"({"model_type": "gpt2", "vocab_size": 1000000000000, "n_positions": 8,)"
            R"( "n_embd": 8, "n_layer": 1, "n_head": 2})"));
    }
};

QTEST_APPLESS_MAIN(TestFuzzReplay)
#include "test_fuzz_replay.moc"
