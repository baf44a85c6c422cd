// The GPT model: configuration and layout, GPT-2 initialisation, the whole model's gradient
// against finite differences in double precision, loss at initialisation, gradient accumulation,
// learning a fixed batch, and bit-identical runs from one seed.
#include "sealtrain/formats/safetensors.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/gpt.h"
#include "sealtrain/trainer/training.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace sealtrain::trainer;

namespace {

GptConfig tinyConfig()
{
    GptConfig config;
    config.vocabSize = 11;
    config.paddedVocabSize = 16;
    config.contextLength = 8;
    config.layers = 2;
    config.heads = 2;
    config.width = 8;
    return config;
}

std::vector<std::int32_t> randomTokens(std::size_t count, std::size_t vocab, std::uint64_t stream)
{
    const CounterRng rng(7);
    std::vector<std::int32_t> tokens(count);
    for (std::size_t i = 0; i < count; ++i)
        tokens[i] = static_cast<std::int32_t>(rng.bits(stream, i) % vocab);
    return tokens;
}

struct Batch {
    std::vector<std::int32_t> tokens;
    std::vector<std::int32_t> targets;
};

// Next-token targets from one random stream of batch · (seq + 1) tokens.
Batch randomBatch(std::size_t batch, std::size_t seq, std::size_t vocab, std::uint64_t stream)
{
    const std::vector<std::int32_t> stream1 = randomTokens(batch * (seq + 1), vocab, stream);
    Batch out;
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < seq; ++t) {
            out.tokens.push_back(stream1[b * (seq + 1) + t]);
            out.targets.push_back(stream1[b * (seq + 1) + t + 1]);
        }
    }
    return out;
}

struct TrainedRun {
    std::vector<float> parameters;
    std::vector<double> losses;
};

TrainedRun train(const GptConfig& config, std::uint64_t seed, std::size_t steps, std::size_t batch,
                 std::size_t seq, double learningRate)
{
    auto model = CpuModel::create({config, {batch, seq}, AdamWParams{}});
    if (!model || !(*model)->initialize(seed))
        qFatal("cannot create and initialise the model");
    const Batch first = randomBatch(batch, seq, config.vocabSize, 1);
    const Batch second = randomBatch(batch, seq, config.vocabSize, 2);
    const std::vector<MicroBatch> micro{{first.tokens, first.targets},
                                        {second.tokens, second.targets}};
    TrainedRun run;
    for (std::size_t step = 0; step < steps; ++step) {
        const TrainStepParams params{batch, seq, learningRate, 1.0};
        auto result = trainStep(**model, micro, params);
        Q_ASSERT(result.ok());
        run.losses.push_back(result->loss);
    }
    const std::span<const float> trained = (*model)->gpt().parameters();
    run.parameters.assign(trained.begin(), trained.end());
    return run;
}

}  // namespace

class TestTrainerModel : public QObject {
    Q_OBJECT

private slots:
    void configValidation_data()
    {
        QTest::addColumn<int>("field");
        QTest::addColumn<int>("value");
        QTest::addColumn<bool>("valid");
        QTest::newRow("tiny is valid") << -1 << 0 << true;
        QTest::newRow("no vocabulary") << 0 << 0 << false;
        QTest::newRow("padding smaller than vocabulary") << 1 << 10 << false;
        QTest::newRow("no context") << 2 << 0 << false;
        QTest::newRow("no layers") << 3 << 0 << false;
        QTest::newRow("no heads") << 4 << 0 << false;
        QTest::newRow("heads do not divide width") << 4 << 3 << false;
        QTest::newRow("no width") << 5 << 0 << false;
    }

    void configValidation()
    {
        QFETCH(int, field);
        QFETCH(int, value);
        QFETCH(bool, valid);
        GptConfig config = tinyConfig();
        std::size_t* fields[] = {&config.vocabSize, &config.paddedVocabSize, &config.contextLength,
                                 &config.layers,    &config.heads,           &config.width};
        if (field >= 0)
            *fields[field] = static_cast<std::size_t>(value);
        const auto result = config.validate();
        QCOMPARE(result.ok(), valid);
        if (!valid)
            QVERIFY(sealtrain::isOneSentence(result.error().message()));
        QCOMPARE(Gpt<float>::create(config, 1, 1).ok(), valid);
    }

    void createRefusesLongSequences()
    {
        QVERIFY(!Gpt<float>::create(tinyConfig(), 1, 9).ok());
        QVERIFY(Gpt<float>::create(tinyConfig(), 1, 8).ok());
    }

    void layoutMatchesGpt2()
    {
        // GPT-2 small's layout: 124,475,904 parameters with the vocabulary padded to 50304
        // (llm.c's count), and Hugging Face's names and Conv1D shapes.
        const ParameterLayout layout(GptConfig::gpt2Small());
        QCOMPARE(layout.totalSize(), std::size_t{124475904});
        QCOMPARE(layout.tensors().size(), std::size_t{2 + 12 * 12 + 2});
        const ParameterTensor* qkv = layout.find("h.11.attn.c_attn.weight");
        QVERIFY(qkv != nullptr);
        QCOMPARE(qkv->shape, (std::vector<std::size_t>{768, 2304}));
        QVERIFY(qkv->weightDecay);
        const ParameterTensor* fcProj = layout.find("h.0.mlp.c_proj.weight");
        QVERIFY(fcProj != nullptr);
        QCOMPARE(fcProj->shape, (std::vector<std::size_t>{3072, 768}));
        QVERIFY(std::abs(fcProj->initStd - 0.02 / std::sqrt(24.0)) < 1e-15);
        QVERIFY(!layout.find("ln_f.bias")->weightDecay);
        QVERIFY(layout.find("wte.weight")->weightDecay);
        QCOMPARE(layout.find("wpe.weight")->shape, (std::vector<std::size_t>{1024, 768}));
        // Tensors tile the buffer without gaps, in order.
        std::size_t offset = 0;
        for (const auto& tensor : layout.tensors()) {
            QCOMPARE(tensor.offset, offset);
            offset += tensor.size;
        }
        QCOMPARE(offset, layout.totalSize());
        // blockTensors() indexes the names it says.
        const BlockTensors block = blockTensors(3);
        QCOMPARE(layout.tensors()[block.ln1Weight].name, std::string("h.3.ln_1.weight"));
        QCOMPARE(layout.tensors()[block.fcProjBias].name, std::string("h.3.mlp.c_proj.bias"));
    }

    void counterRngKnownAnswers()
    {
        // Values from an independent Python model of the construction (SplitMix64's mixer,
        // whose first output from state 0 is Vigna's 0xe220a8397b1dcdaf, chained three times):
        // initialisation must give these bits on every platform.
        QCOMPARE(CounterRng(0).bits(0, 0), std::uint64_t{0x238275bc38fcbe91ULL});
        QCOMPARE(CounterRng(42).bits(3, 7), std::uint64_t{0xab2f97746e2ea953ULL});
        QVERIFY(std::abs(CounterRng(42).normal(3, 7) - -0.10465938386384988) < 1e-15);
        const CounterRng rng(0);
        QVERIFY(rng.bits(0, 0) != rng.bits(0, 1));
        QVERIFY(rng.bits(0, 0) != rng.bits(1, 0));
        QVERIFY(CounterRng(1).bits(0, 0) != rng.bits(0, 0));
        // Normal draws: mean ≈ 0 and variance ≈ 1 over many samples.
        double sum = 0.0;
        double squares = 0.0;
        const std::size_t n = 200000;
        for (std::size_t i = 0; i < n; ++i) {
            const double z = rng.normal(3, i);
            sum += z;
            squares += z * z;
        }
        QVERIFY(std::abs(sum / n) < 0.01);
        QVERIFY(std::abs(squares / n - 1.0) < 0.01);
    }

    void initialisationFollowsGpt2()
    {
        GptConfig config = tinyConfig();
        config.width = 64;
        config.heads = 4;
        config.layers = 3;
        auto model = Gpt<float>::create(config, 1, 1);
        QVERIFY(model.ok());
        model->initialize(42);
        for (const auto& tensor : model->layout().tensors()) {
            std::span<const float> values = std::as_const(*model).parameter(tensor);
            if (tensor.offset == 0)  // wte: the padding rows are zero, the others are drawn
                values = values.first(config.vocabSize * config.width);
            if (tensor.initStd == 0.0) {
                for (const float v : values)
                    QCOMPARE(v, tensor.initConstant);
                continue;
            }
            double squares = 0.0;
            for (const float v : values)
                squares += static_cast<double>(v) * static_cast<double>(v);
            const double std = std::sqrt(squares / static_cast<double>(values.size()));
            QVERIFY2(std::abs(std / tensor.initStd - 1.0) < 0.15, tensor.name.c_str());
        }
        const auto wte = std::as_const(*model).parameter(model->layout().tensors()[0]);
        for (std::size_t i = config.vocabSize * config.width; i < wte.size(); ++i)
            QCOMPARE(wte[i], 0.0F);
        QVERIFY(std::abs(model->layout().find("h.2.attn.c_proj.weight")->initStd
                         - 0.02 / std::sqrt(6.0))
                < 1e-15);
    }

    void wholeModelGradientMatchesFiniteDifferences()
    {
        // Every parameter of a tiny model, in double, with weights large enough that attention,
        // GELU and LayerNorm are far from linear, and one masked target.
        const GptConfig config = tinyConfig();
        const std::size_t batch = 2;
        const std::size_t seq = 5;
        auto created = Gpt<double>::create(config, batch, seq);
        QVERIFY(created.ok());
        Gpt<double>& model = *created;
        const CounterRng rng(11);
        for (const auto& tensor : model.layout().tensors()) {
            auto values = model.parameter(tensor);
            for (std::size_t i = 0; i < values.size(); ++i)
                values[i] = tensor.initConstant + 0.4 * rng.normal(tensor.offset, i);
        }
        Batch data = randomBatch(batch, seq, config.vocabSize, 5);
        data.targets[3] = -1;
        auto loss = model.forward(data.tokens, data.targets, batch, seq);
        QVERIFY(loss.ok());
        model.zeroGradients();
        model.backward();
        const std::vector<double> analytic(model.gradients().begin(), model.gradients().end());

        const double h = 1e-6;
        std::size_t checked = 0;
        auto parameters = model.parameters();
        for (std::size_t i = 0; i < parameters.size(); ++i) {
            const double saved = parameters[i];
            parameters[i] = saved + h;
            const double plus = *model.forward(data.tokens, data.targets, batch, seq);
            parameters[i] = saved - h;
            const double minus = *model.forward(data.tokens, data.targets, batch, seq);
            parameters[i] = saved;
            const double numeric = (plus - minus) / (2 * h);
            if (!(std::abs(analytic[i] - numeric) <= 1e-7 * (1.0 + std::abs(numeric)))) {
                const std::string where = "parameter " + std::to_string(i) + ": backward "
                                          + std::to_string(analytic[i]) + ", finite difference "
                                          + std::to_string(numeric);
                QFAIL(where.c_str());
            }
            ++checked;
        }
        QCOMPARE(checked, model.layout().totalSize());
        // The padding rows of wte get no gradient.
        for (std::size_t i = config.vocabSize * config.width;
             i < config.paddedVocabSize * config.width; ++i)
            QCOMPARE(analytic[i], 0.0);
    }

    void gradientAccumulationAverages()
    {
        // Two micro-batches at scale 1/2 give the mean of their separate gradients.
        const GptConfig config = tinyConfig();
        auto created = Gpt<double>::create(config, 2, 6);
        QVERIFY(created.ok());
        Gpt<double>& model = *created;
        model.initialize(3);
        const Batch a = randomBatch(2, 6, config.vocabSize, 8);
        const Batch b = randomBatch(2, 6, config.vocabSize, 9);
        std::vector<std::vector<double>> separate;
        for (const Batch* batch : {&a, &b}) {
            model.zeroGradients();
            QVERIFY(model.forward(batch->tokens, batch->targets, 2, 6).ok());
            model.backward();
            separate.emplace_back(model.gradients().begin(), model.gradients().end());
        }
        model.zeroGradients();
        for (const Batch* batch : {&a, &b}) {
            QVERIFY(model.forward(batch->tokens, batch->targets, 2, 6).ok());
            model.backward(0.5);
        }
        double largest = 0.0;
        for (std::size_t i = 0; i < separate[0].size(); ++i) {
            const double mean = 0.5 * (separate[0][i] + separate[1][i]);
            QVERIFY(std::abs(model.gradients()[i] - mean) <= 1e-14 * (1.0 + std::abs(mean)));
            largest = std::max(largest, std::abs(mean));
        }
        QVERIFY(largest > 1e-3);
    }

    void forwardRejectsBadInput()
    {
        auto model = Gpt<float>::create(tinyConfig(), 2, 4);
        QVERIFY(model.ok());
        const std::vector<std::int32_t> tokens(8, 1);
        std::vector<std::int32_t> targets(8, 2);
        QVERIFY(model->forward(tokens, targets, 2, 4).ok());
        QVERIFY(!model->forward(tokens, targets, 4, 2).ok());  // more sequences than sized for
        targets[5] = 11;                                       // == vocabSize
        const auto refused = model->forward(tokens, targets, 2, 4);
        QVERIFY(!refused.ok());
        QVERIFY(sealtrain::isOneSentence(refused.error().message()));
        targets[5] = -1;
        QVERIFY(model->forward(tokens, targets, 2, 4).ok());
        std::vector<std::int32_t> badTokens = tokens;
        badTokens[0] = -1;
        QVERIFY(!model->forward(badTokens, targets, 2, 4).ok());
    }

    void lossAtInitialisationIsLogVocabulary()
    {
        GptConfig config = tinyConfig();
        config.vocabSize = 50;
        config.paddedVocabSize = 64;
        config.width = 32;
        auto model = Gpt<float>::create(config, 4, 8);
        QVERIFY(model.ok());
        model->initialize(1);
        const Batch data = randomBatch(4, 8, config.vocabSize, 3);
        const auto loss = model->forward(data.tokens, data.targets, 4, 8);
        QVERIFY(loss.ok());
        // Small initial weights give near-uniform predictions: loss ≈ ln(50) ≈ 3.912.
        QVERIFY2(std::abs(static_cast<double>(*loss) - std::log(50.0)) < 0.05,
                 std::to_string(*loss).c_str());
        // And the probabilities over the real vocabulary sum to 1.
        const auto probs = model->probabilities();
        double sum = 0.0;
        for (std::size_t i = 0; i < config.paddedVocabSize; ++i)
            sum += static_cast<double>(probs[i]);
        QVERIFY(std::abs(sum - 1.0) < 1e-5);
    }

    void learnsAFixedBatch()
    {
        GptConfig config;
        config.vocabSize = 32;
        config.paddedVocabSize = 64;
        config.contextLength = 16;
        config.layers = 2;
        config.heads = 2;
        config.width = 32;
        const TrainedRun run = train(config, 5, 50, 4, 16, 3e-3);
        const std::string losses =
            std::to_string(run.losses.front()) + " -> " + std::to_string(run.losses.back());
        QVERIFY2(std::abs(run.losses.front() - std::log(32.0)) < 0.1, losses.c_str());
        QVERIFY2(run.losses.back() < 0.3 * run.losses.front(), losses.c_str());
    }

    void sameSeedGivesIdenticalParameters()
    {
        const GptConfig config = tinyConfig();
        const TrainedRun first = train(config, 9, 5, 2, 8, 1e-2);
        const TrainedRun second = train(config, 9, 5, 2, 8, 1e-2);
        const TrainedRun other = train(config, 10, 5, 2, 8, 1e-2);
        QCOMPARE(first.parameters.size(), second.parameters.size());
        QVERIFY(std::memcmp(first.parameters.data(), second.parameters.data(),
                            first.parameters.size() * sizeof(float))
                == 0);
        QVERIFY(first.losses == second.losses);
        QVERIFY(first.parameters != other.parameters);
    }

    void safetensorsExport()
    {
        auto model = Gpt<float>::create(tinyConfig(), 1, 1);
        QVERIFY(model.ok());
        model->initialize(4);
        const auto entries = gptExportEntries(model->config(), model->parameters());
        QCOMPARE(entries.size(), model->layout().tensors().size());
        QCOMPARE(entries[0].name, std::string("wte.weight"));
        QCOMPARE(entries[0].shape, (std::vector<std::size_t>{11, 8}));  // padding dropped
        auto bytes = encodeSafetensors(entries, {{"format", "pt"}});
        QVERIFY(bytes.ok());
        std::uint64_t headerSize = 0;
        for (std::size_t i = 0; i < 8; ++i)
            headerSize |= static_cast<std::uint64_t>((*bytes)[i]) << (8 * i);
        QCOMPARE(headerSize % 8, std::uint64_t{0});
        const std::string header(reinterpret_cast<const char*>(bytes->data() + 8), headerSize);
        QVERIFY(header.starts_with("{\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[11,8],"
                                   "\"data_offsets\":[0,352]}"));
        QVERIFY(header.find("\"__metadata__\":{\"format\":\"pt\"}") != std::string::npos);
        const std::size_t exported = model->layout().totalSize() - std::size_t{16 - 11} * 8;
        QCOMPARE(bytes->size(), 8 + headerSize + exported * sizeof(float));
        // The data section starts with wte's first row, bit for bit.
        QVERIFY(std::memcmp(  // NOLINT(bugprone-suspicious-memory-comparison): bit-exact on purpose
                    bytes->data() + 8 + headerSize, model->parameters().data(), 8 * sizeof(float))
                == 0);
        SafetensorsEntry bad = entries[1];
        bad.name = "bad name";
        QVERIFY(!encodeSafetensors(std::vector<SafetensorsEntry>{bad}).ok());
        bad = entries[1];
        bad.shape = {3};
        QVERIFY(!encodeSafetensors(std::vector<SafetensorsEntry>{bad}).ok());
    }
};

QTEST_APPLESS_MAIN(TestTrainerModel)
#include "test_trainer_model.moc"
