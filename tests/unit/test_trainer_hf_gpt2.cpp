// GPT-2 folders in Hugging Face's format (formats/hf_gpt2.h; docs/formats/hf-gpt2.md): the
// config.json Sealtrain writes reads back as the same shape; what the model does not compute is
// refused naming the key; parameters exported under GPT-2's names import back bit for bit (the
// padding rows zero), with or without GPT2LMHeadModel's "transformer." prefix; an untied head,
// another dtype or a missing tensor is refused naming the tensor. transformers' own view of these
// folders is tests/scripts/transformers_interop.py.
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

class TestTrainerHfGpt2 : public QObject {
    Q_OBJECT

private slots:
    void configRoundTrips();
    void configsOurModelCanNotComputeAreRefused();
    void parametersRoundTrip();
    void prefixedNamesAndTiedHeadAreRead();
    void untiedHeadOrOtherDtypeRefused();
};

using namespace sealtrain;
using namespace sealtrain::trainer;

namespace {

GptConfig smallConfig()
{
    GptConfig config;
    config.vocabSize = 61;
    config.paddedVocabSize = GptConfig::padVocab(61);
    config.contextLength = 16;
    config.layers = 2;
    config.heads = 4;
    config.width = 32;
    return config;
}

// Distinct values everywhere but wte's padding rows, which stay zero.
std::vector<float> distinctParameters(const GptConfig& config)
{
    const ParameterLayout layout(config);
    std::vector<float> flat(layout.totalSize());
    for (std::size_t i = 0; i < flat.size(); ++i)
        flat[i] = static_cast<float>(i % 1000) * 0.001F - 0.5F;
    const ParameterTensor* wte = layout.find("wte.weight");
    std::fill(flat.begin()
                  + static_cast<std::ptrdiff_t>(wte->offset + config.vocabSize * config.width),
              flat.begin() + static_cast<std::ptrdiff_t>(wte->offset + wte->size), 0.0F);
    return flat;
}

std::vector<std::uint8_t> encoded(std::vector<SafetensorsEntry> entries)
{
    return encodeSafetensors(entries, {{"format", "pt"}}).value();
}

}  // namespace

void TestTrainerHfGpt2::configRoundTrips()
{
    const GptConfig config = smallConfig();
    const std::string text = gpt2ConfigJson(config, {60, 60});
    const auto json = nlohmann::json::parse(text);
    QCOMPARE(json["model_type"].get<std::string>(), std::string("gpt2"));
    QCOMPARE(json["vocab_size"].get<std::size_t>(), std::size_t{61});
    QCOMPARE(json["eos_token_id"].get<int>(), 60);
    auto read = parseGpt2Config(text);
    QVERIFY2(read, read ? "" : read.error().message().c_str());
    QCOMPARE(read->vocabSize, config.vocabSize);
    QCOMPARE(read->paddedVocabSize, config.paddedVocabSize);
    QCOMPARE(read->contextLength, config.contextLength);
    QCOMPARE(read->layers, config.layers);
    QCOMPARE(read->heads, config.heads);
    QCOMPARE(read->width, config.width);
    // transformers' defaults stand for absent keys.
    QVERIFY(parseGpt2Config(R"({"model_type":"gpt2","vocab_size":50257,"n_positions":1024,
                                "n_layer":12,"n_head":12,"n_embd":768})"));
}

void TestTrainerHfGpt2::configsOurModelCanNotComputeAreRefused()
{
    const auto base = nlohmann::json::parse(gpt2ConfigJson(smallConfig(), {0, 0}));
    const std::vector<std::pair<std::string, nlohmann::json>> changes{
        {"model_type", "llama"},
        {"activation_function", "relu"},
        {"layer_norm_epsilon", 1e-6},
        {"scale_attn_weights", false},
        {"scale_attn_by_inverse_layer_idx", true},
        {"reorder_and_upcast_attn", true},
        {"tie_word_embeddings", false},
        {"n_inner", 100},
        {"n_head", 5},  // 32 channels do not split into 5 heads
        {"vocab_size", 0},
        {"n_layer", "two"}};
    for (const auto& [key, value] : changes) {
        nlohmann::json changed = base;
        changed[key] = value;
        auto refused = parseGpt2Config(changed.dump());
        QVERIFY2(!refused, key.c_str());
        QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(refused.error().message()));
        if (key != "n_head")
            QVERIFY2(refused.error().message().find(key) != std::string::npos,
                     refused.error().message().c_str());
    }
    QVERIFY(!parseGpt2Config("[1, 2]"));
}

void TestTrainerHfGpt2::parametersRoundTrip()
{
    const GptConfig config = smallConfig();
    const std::vector<float> flat = distinctParameters(config);
    const std::vector<std::uint8_t> bytes = encoded(gptExportEntries(config, flat));
    auto file = decodeSafetensors(bytes);
    QVERIFY(file);
    QCOMPARE(file->tensors.at("wte.weight").shape, (std::vector<std::size_t>{61, 32}));
    auto imported = importGpt2Parameters(config, *file);
    QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
    QCOMPARE(*imported, flat);
}

void TestTrainerHfGpt2::prefixedNamesAndTiedHeadAreRead()
{
    const GptConfig config = smallConfig();
    const std::vector<float> flat = distinctParameters(config);
    std::vector<SafetensorsEntry> entries = gptExportEntries(config, flat);
    for (SafetensorsEntry& entry : entries)
        entry.name = "transformer." + entry.name;
    SafetensorsEntry head = entries.front();  // transformer.wte.weight
    head.name = "lm_head.weight";
    entries.push_back(head);
    const std::vector<std::uint8_t> bytes = encoded(entries);
    auto imported = importGpt2Parameters(config, decodeSafetensors(bytes).value());
    QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
    QCOMPARE(*imported, flat);
}

void TestTrainerHfGpt2::untiedHeadOrOtherDtypeRefused()
{
    const GptConfig config = smallConfig();
    const std::vector<float> flat = distinctParameters(config);
    std::vector<float> otherHead(config.vocabSize * config.width, 0.25F);
    std::vector<SafetensorsEntry> entries = gptExportEntries(config, flat);
    entries.push_back({"lm_head.weight",
                       "F32",
                       {config.vocabSize, config.width},
                       std::as_bytes(std::span<const float>(otherHead))});
    auto untied = importGpt2Parameters(config, decodeSafetensors(encoded(entries)).value());
    QVERIFY(!untied);
    QCOMPARE(untied.error().code(), ErrorCode::Integrity);
    QVERIFY(untied.error().message().find("lm_head.weight") != std::string::npos);

    // wpe in F64 and a missing tensor: each refused, naming the tensor.
    std::vector<SafetensorsEntry> wrongType = gptExportEntries(config, flat);
    std::vector<double> wpe(config.contextLength * config.width, 0.5);
    for (SafetensorsEntry& entry : wrongType)
        if (entry.name == "wpe.weight")
            entry = {"wpe.weight",
                     "F64",
                     {config.contextLength, config.width},
                     std::as_bytes(std::span<const double>(wpe))};
    auto refused = importGpt2Parameters(config, decodeSafetensors(encoded(wrongType)).value());
    QVERIFY(!refused);
    QVERIFY2(refused.error().message().find("wpe.weight") != std::string::npos,
             refused.error().message().c_str());
    std::vector<SafetensorsEntry> missing = gptExportEntries(config, flat);
    missing.pop_back();  // ln_f.bias
    auto absent = importGpt2Parameters(config, decodeSafetensors(encoded(missing)).value());
    QVERIFY(!absent);
    QVERIFY2(absent.error().message().find("ln_f.bias") != std::string::npos,
             absent.error().message().c_str());
}

QTEST_APPLESS_MAIN(TestTrainerHfGpt2)
#include "test_trainer_hf_gpt2.moc"
