// Choosing the backend (model_factory.h) with stand-in CUDA hooks, so every branch runs on any
// machine: the CPU on request or when no CUDA part or GPU is there, the GPU of rank r mod the
// count, and one sentence that says what to do when --device cuda can not be honoured. Also the
// CPU model behind the Model interface (cpu_model.h): its state round trip, probabilities and
// refusals, and builtBackends() offering CUDA exactly when it was built.
#include "sealtrain/trainer/built_backends.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/model_factory.h"
#include "sealtrain/trainer/training.h"

#include <QtTest/QtTest>

#include <numeric>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::trainer;

namespace {

ModelSpec tinySpec()
{
    ModelSpec spec;
    spec.config.vocabSize = 10;
    spec.config.paddedVocabSize = 16;
    spec.config.contextLength = 8;
    spec.config.layers = 1;
    spec.config.heads = 2;
    spec.config.width = 8;
    spec.capacity = {2, 4};
    return spec;
}

// A CUDA hook that sees `gpus` GPUs and records which one it was asked for; the "GPU model" it
// returns is a CPU one, which is all these tests need.
struct FakeCuda {
    int gpus = 0;
    int askedFor = -1;

    ModelBackends backends()
    {
        CudaBackend cuda;
        cuda.visibleGpus = [this] { return GpuCount{gpus, gpus == 0 ? "no GPU here" : ""}; };
        cuda.create = [this](const ModelSpec& spec, int gpu) -> Result<std::unique_ptr<Model>> {
            askedFor = gpu;
            auto model = CpuModel::create(spec);
            if (!model)
                return model.error();
            return std::unique_ptr<Model>(std::move(model).value());
        };
        return {cuda};
    }
};

std::unique_ptr<CpuModel> cpuModel()
{
    auto model = CpuModel::create(tinySpec());
    if (!model)
        qFatal("cannot create the CPU model: %s", model.error().message().c_str());
    return std::move(model).value();
}

}  // namespace

class TestTrainerDevice : public QObject {
    Q_OBJECT

private slots:
    void deviceNamesRoundTrip()
    {
        for (const Device device : {Device::Auto, Device::Cpu, Device::Cuda})
            QCOMPARE(parseDevice(deviceName(device)), std::optional<Device>(device));
        QVERIFY(!parseDevice("gpu"));
        QVERIFY(!parseDevice("CPU"));
    }

    void withoutCudaPartsTheCpuTrainsAndCudaIsRefused()
    {
        const ModelBackends none;
        for (const Device device : {Device::Auto, Device::Cpu}) {
            auto model = createModel(device, tinySpec(), none);
            QVERIFY(model.ok());
            QCOMPARE((*model)->device(), std::string_view("cpu"));
        }
        auto refused = createModel(Device::Cuda, tinySpec(), none);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Unsupported);
        QVERIFY(isOneSentence(refused.error().message()));
        QVERIFY2(refused.error().message().find("built without the CUDA parts")
                     != std::string::npos,
                 refused.error().message().c_str());
        QVERIFY(refused.error().message().find("--device cpu") != std::string::npos);
    }

    void withoutGpuAutoIsTheCpuAndCudaSaysWhatToDo()
    {
        FakeCuda cuda;
        const ModelBackends backends = cuda.backends();
        auto automatic = createModel(Device::Auto, tinySpec(), backends);
        QVERIFY(automatic.ok());
        QCOMPARE((*automatic)->device(), std::string_view("cpu"));
        QCOMPARE(cuda.askedFor, -1);
        auto refused = createModel(Device::Cuda, tinySpec(), backends);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Unsupported);
        const std::string& message = refused.error().message();
        QVERIFY2(isOneSentence(message), message.c_str());
        QVERIFY2(message.find("No CUDA GPU is visible (no GPU here)") != std::string::npos,
                 message.c_str());
        QVERIFY(message.find("--device cpu") != std::string::npos);
        QCOMPARE(cuda.askedFor, -1);
    }

    void withGpusAutoAndCudaTakeTheRanksGpu()
    {
        FakeCuda cuda;
        cuda.gpus = 2;
        const ModelBackends backends = cuda.backends();
        QVERIFY(createModel(Device::Auto, tinySpec(), backends, 3).ok());
        QCOMPARE(cuda.askedFor, 1);
        QVERIFY(createModel(Device::Cuda, tinySpec(), backends, 4).ok());
        QCOMPARE(cuda.askedFor, 0);
        cuda.askedFor = -1;
        QVERIFY(createModel(Device::Cpu, tinySpec(), backends, 1).ok());
        QCOMPARE(cuda.askedFor, -1);
    }

    void builtBackendsOfferCudaExactlyWhenBuilt()
    {
        QCOMPARE(builtBackends().cuda.has_value(), SEALTRAIN_CUDA_BUILT != 0);
    }

    void cpuModelStateRoundTrip()
    {
        auto model = cpuModel();
        QVERIFY(model->initialize(3).ok());
        const std::size_t n = model->layout().totalSize();
        std::vector<float> parameters(n);
        std::vector<float> m(n);
        std::vector<float> v(n);
        std::iota(parameters.begin(), parameters.end(), 0.5F);
        std::iota(m.begin(), m.end(), 1.5F);
        std::iota(v.begin(), v.end(), 2.5F);
        QVERIFY(model->setState({parameters, m, v, 7}).ok());
        auto state = model->state();
        QVERIFY(state.ok());
        QVERIFY(std::equal(parameters.begin(), parameters.end(), state->parameters.begin()));
        QVERIFY(std::equal(m.begin(), m.end(), state->firstMoment.begin()));
        QVERIFY(std::equal(v.begin(), v.end(), state->secondMoment.begin()));
        QCOMPARE(state->optimizerStep, std::uint64_t{7});

        // initialize starts the optimizer afresh.
        QVERIFY(model->initialize(3).ok());
        state = model->state();
        QCOMPARE(state->optimizerStep, std::uint64_t{0});
        QVERIFY(std::all_of(state->firstMoment.begin(), state->firstMoment.end(),
                            [](float x) { return x == 0.0F; }));

        const std::vector<float> tooShort(n - 1);
        const auto refused = model->setState({parameters, tooShort, v, 1});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(!model->setParameters(tooShort));
    }

    void cpuModelProbabilitiesAreTheForwardPassSoftmax()
    {
        auto model = cpuModel();
        QVERIFY(model->initialize(5).ok());
        std::vector<float> probabilities(tinySpec().config.vocabSize);
        QVERIFY(!model->probabilities(0, probabilities));  // no forward pass yet
        const std::vector<std::int32_t> tokens{1, 2, 3, 4, 5, 6, 7, 8};
        const std::vector<std::int32_t> targets(tokens.size(), -1);
        QVERIFY(model->forward(tokens, targets, 2, 4).ok());
        for (std::size_t row = 0; row < tokens.size(); ++row) {
            QVERIFY(model->probabilities(row, probabilities).ok());
            const auto want = model->gpt().probabilities().subspan(
                row * tinySpec().config.paddedVocabSize, probabilities.size());
            QVERIFY(std::equal(want.begin(), want.end(), probabilities.begin()));
        }
        QVERIFY(!model->probabilities(tokens.size(), probabilities));
        std::vector<float> wrongSize(probabilities.size() + 1);
        QVERIFY(!model->probabilities(0, wrongSize));
    }

    void joiningOneRankChangesNothing()
    {
        // The step of a model joined to the one-rank collective equals the unjoined one's.
        auto joined = cpuModel();
        auto alone = cpuModel();
        QVERIFY(joined->initialize(1).ok());
        QVERIFY(alone->initialize(1).ok());
        const auto single = openSingleCollective();
        QVERIFY(joined->joinRanks(*single).ok());
        const std::vector<std::int32_t> tokens{1, 2, 3, 4, 5, 6, 7, 8};
        const std::vector<std::int32_t> targets{2, 3, 4, 5, 6, 7, 8, 9};
        const std::vector<MicroBatch> micro{{tokens, targets}, {targets, tokens}};
        const TrainStepParams params{2, 4, 1e-2, 1.0};
        auto a = trainStep(*joined, micro, params);
        auto b = trainStep(*alone, micro, params);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->loss, b->loss);
        QCOMPARE(a->gradientNorm, b->gradientNorm);
        QVERIFY(std::equal(joined->gpt().parameters().begin(), joined->gpt().parameters().end(),
                           alone->gpt().parameters().begin()));
    }
};

QTEST_APPLESS_MAIN(TestTrainerDevice)
#include "test_trainer_device.moc"
