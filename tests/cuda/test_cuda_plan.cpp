// The CUDA backend's host-side logic, which needs no GPU: every cuBLAS(Lt) call the model makes
// (gemm_call.h), run on a column-major reference here and compared with the CPU model's operation;
// launch shapes, the fixed chunking of column sums, the token buckets of the embedding's backward
// pass, the gradient buckets of the overlapped all-reduce, and the refusals CudaGpt::create gives
// before it touches a device.
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/gemm_call.h"
#include "sealtrain/trainer/cuda/plan.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace sealtrain::trainer;
using namespace sealtrain::trainer::cuda;

namespace {

std::vector<float> randomValues(std::size_t count, std::uint64_t stream)
{
    const CounterRng rng(21);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
        values[i] = static_cast<float>(rng.normal(stream, i));
    return values;
}

float gelu(float x)
{
    float out = 0.0F;
    cpu::geluForward(&out, &x, 1);
    return out;
}

float geluDerivative(float x)
{
    float derivative = 0.0F;
    const float one = 1.0F;
    cpu::geluBackward(&derivative, &one, &x, 1);
    return derivative;
}

// What cuBLASLt computes for a call, in double, column-major, on host float arrays.
void runReference(const GemmCall& call)
{
    const auto* a = static_cast<const float*>(call.a);
    const auto* b = static_cast<const float*>(call.b);
    auto* d = static_cast<float*>(call.d);
    const auto* bias = static_cast<const float*>(call.bias);
    auto* aux = static_cast<float*>(call.aux);
    for (std::size_t j = 0; j < call.n; ++j) {
        for (std::size_t i = 0; i < call.m; ++i) {
            double sum = 0.0;
            for (std::size_t l = 0; l < call.k; ++l) {
                const float av = call.transposeA ? a[l + i * call.lda] : a[i + l * call.lda];
                const float bv = call.transposeB ? b[j + l * call.ldb] : b[l + j * call.ldb];
                sum += static_cast<double>(av) * static_cast<double>(bv);
            }
            float& out = d[i + j * call.ldd];
            auto value = static_cast<float>(call.alpha * sum);
            if (call.beta != 0.0F)
                value += call.beta * out;
            switch (call.epilogue) {
            case GemmEpilogue::None: break;
            case GemmEpilogue::Bias: value += bias[i]; break;
            case GemmEpilogue::GeluBias:
                value += bias[i];
                aux[i + j * call.ldd] = value;
                value = gelu(value);
                break;
            case GemmEpilogue::GeluBackward: value *= geluDerivative(aux[i + j * call.ldd]); break;
            }
            out = value;
        }
    }
}

void runReference(const BatchedGemmCall& call)
{
    for (std::size_t matrix = 0; matrix < call.batch; ++matrix) {
        GemmCall one;
        one.transposeA = call.transposeA;
        one.transposeB = call.transposeB;
        one.m = call.m;
        one.n = call.n;
        one.k = call.k;
        one.a = static_cast<const float*>(call.a) + matrix * call.strideA;
        one.lda = call.lda;
        one.b = static_cast<const float*>(call.b) + matrix * call.strideB;
        one.ldb = call.ldb;
        one.d = static_cast<float*>(call.c) + matrix * call.strideC;
        one.ldd = call.ldc;
        one.alpha = call.alpha;
        one.beta = call.beta;
        runReference(one);
    }
}

void compare(const std::vector<float>& got, const std::vector<float>& want)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::fabs(got[i] - want[i]) <= 1e-5F * (1.0F + std::fabs(want[i])),
                 qPrintable(QString("element %1: %2 vs %3").arg(i).arg(got[i]).arg(want[i])));
}

}  // namespace

class TestCudaPlan final : public QObject {
    Q_OBJECT

private slots:
    void linearCallsMatchTheCpuMatmul()
    {
        const LinearShape shape{6, 5, 7};
        const auto in = randomValues(shape.rows * shape.inWidth, 1);
        const auto weight = randomValues(shape.inWidth * shape.outWidth, 2);
        const auto bias = randomValues(shape.outWidth, 3);
        const auto dout = randomValues(shape.rows * shape.outWidth, 4);

        std::vector<float> out(shape.rows * shape.outWidth), want(out.size());
        runReference(linearForwardCall(out.data(), in.data(), weight.data(), bias.data(), shape,
                                       GemmEpilogue::Bias));
        cpu::matmulForward(want.data(), in.data(), weight.data(), bias.data(),
                           {shape.rows, shape.inWidth, shape.outWidth});
        compare(out, want);

        std::vector<float> activated(out.size()), preActivation(out.size()), wantGelu(out.size());
        runReference(linearForwardCall(activated.data(), in.data(), weight.data(), bias.data(),
                                       shape, GemmEpilogue::GeluBias, preActivation.data()));
        cpu::geluForward(wantGelu.data(), want.data(), want.size());
        compare(preActivation, want);
        compare(activated, wantGelu);

        std::vector<float> din(in.size()), dweight = randomValues(weight.size(), 5);
        std::vector<float> wantDin(in.size(), 0.0F), wantDweight = dweight;
        std::vector<float> wantDbias(shape.outWidth, 0.0F);
        runReference(linearInputGradientCall(din.data(), dout.data(), weight.data(), shape));
        runReference(linearWeightGradientCall(dweight.data(), dout.data(), in.data(), shape));
        cpu::matmulBackward(wantDin.data(), wantDweight.data(), wantDbias.data(), dout.data(),
                            in.data(), weight.data(), {shape.rows, shape.inWidth, shape.outWidth});
        compare(din, wantDin);
        compare(dweight, wantDweight);  // accumulated onto what was there

        // The GELU-backward epilogue: the input gradient times GELU′ of the pre-activation.
        const LinearShape projection{shape.rows, shape.outWidth, shape.inWidth};
        const auto dprojected = randomValues(shape.rows * shape.inWidth, 6);
        std::vector<float> dpre(out.size()), dgelu(out.size(), 0.0F), scratchW(weight.size());
        std::vector<float> scratchB(shape.inWidth), wantDpre(out.size(), 0.0F);
        const auto projectionWeight = randomValues(shape.outWidth * shape.inWidth, 7);
        runReference(linearInputGradientCall(dpre.data(), dprojected.data(),
                                             projectionWeight.data(), projection,
                                             GemmEpilogue::GeluBackward, preActivation.data()));
        cpu::matmulBackward(dgelu.data(), scratchW.data(), scratchB.data(), dprojected.data(),
                            activated.data(), projectionWeight.data(),
                            {shape.rows, shape.outWidth, shape.inWidth});
        cpu::geluBackward(wantDpre.data(), dgelu.data(), preActivation.data(), wantDpre.size());
        compare(dpre, wantDpre);
    }

    void lmHeadCallsMatchTheCpuHead()
    {
        const std::size_t rows = 6, width = 5, vocab = 9;
        const auto in = randomValues(rows * width, 8);
        const auto wte = randomValues(vocab * width, 9);
        const auto dlogits = randomValues(rows * vocab, 10);
        std::vector<float> logits(rows * vocab), wantLogits(logits.size());
        runReference(lmHeadForwardCall(logits.data(), in.data(), wte.data(), rows, width, vocab));
        cpu::lmHeadForward(wantLogits.data(), in.data(), wte.data(), {rows, width, vocab});
        compare(logits, wantLogits);

        std::vector<float> din(in.size()), dwte = randomValues(wte.size(), 11);
        std::vector<float> wantDin(in.size(), 0.0F), wantDwte = dwte;
        runReference(
            lmHeadInputGradientCall(din.data(), dlogits.data(), wte.data(), rows, width, vocab));
        runReference(
            lmHeadWeightGradientCall(dwte.data(), dlogits.data(), in.data(), rows, width, vocab));
        cpu::lmHeadBackward(wantDin.data(), wantDwte.data(), dlogits.data(), in.data(), wte.data(),
                            {rows, width, vocab});
        compare(din, wantDin);
        compare(dwte, wantDwte);
    }

    // The per-head products with the layout changes and the causal softmax done here as the
    // kernels do them, against the CPU's attention forward and backward.
    void attentionCallsMatchTheCpuAttention()
    {
        const std::size_t batch = 2, seq = 5, heads = 3, hs = 4, width = heads * hs;
        const AttentionGemmShape shape{batch * heads, seq, hs};
        const auto qkv = randomValues(batch * seq * 3 * width, 12);
        const auto dout = randomValues(batch * seq * width, 13);
        const std::size_t perPart = batch * seq * width;
        // (b, t, part, h, d) of qkv → (b, h, t, d) of q, k, v; and (b, h, t, d) ↔ (b, t, h, d).
        auto headMajor = [&](std::size_t b, std::size_t h, std::size_t t, std::size_t d) {
            return ((b * heads + h) * seq + t) * hs + d;
        };
        std::vector<float> q(perPart), k(perPart), v(perPart);
        std::vector<float> dy(perPart);
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t t = 0; t < seq; ++t)
                for (std::size_t h = 0; h < heads; ++h)
                    for (std::size_t d = 0; d < hs; ++d) {
                        const std::size_t row = (b * seq + t) * 3 * width + h * hs + d;
                        q[headMajor(b, h, t, d)] = qkv[row];
                        k[headMajor(b, h, t, d)] = qkv[row + width];
                        v[headMajor(b, h, t, d)] = qkv[row + 2 * width];
                        dy[headMajor(b, h, t, d)] = dout[(b * seq + t) * width + h * hs + d];
                    }
        std::vector<float> probs(shape.matrices * seq * seq);
        runReference(attentionScoresCall(probs.data(), q.data(), k.data(), shape));
        for (std::size_t row = 0; row < shape.matrices * seq; ++row) {
            float* x = probs.data() + row * seq;
            const std::size_t t = row % seq;
            const float largest = *std::max_element(x, x + t + 1);
            float sum = 0.0F;
            for (std::size_t j = 0; j <= t; ++j)
                sum += std::exp(x[j] - largest);
            for (std::size_t j = 0; j < seq; ++j)
                x[j] = j <= t ? std::exp(x[j] - largest) / sum : 0.0F;
        }
        std::vector<float> y(perPart);
        runReference(attentionOutputCall(y.data(), probs.data(), v.data(), shape));
        std::vector<float> out(perPart);
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t t = 0; t < seq; ++t)
                for (std::size_t h = 0; h < heads; ++h)
                    for (std::size_t d = 0; d < hs; ++d)
                        out[(b * seq + t) * width + h * hs + d] = y[headMajor(b, h, t, d)];
        std::vector<float> wantOut(perPart), wantProbs(probs.size());
        const cpu::AttentionShape cpuShape{batch, seq, heads, width};
        cpu::attentionForward(wantOut.data(), wantProbs.data(), qkv.data(), cpuShape);
        compare(out, wantOut);
        compare(probs, wantProbs);

        std::vector<float> dscores(probs.size()), dq(perPart), dk(perPart), dv(perPart);
        runReference(attentionProbsGradientCall(dscores.data(), dy.data(), v.data(), shape));
        runReference(attentionValueGradientCall(dv.data(), probs.data(), dy.data(), shape));
        for (std::size_t row = 0; row < shape.matrices * seq; ++row) {
            const std::size_t t = row % seq;
            float* ds = dscores.data() + row * seq;
            const float* p = probs.data() + row * seq;
            float dot = 0.0F;
            for (std::size_t j = 0; j <= t; ++j)
                dot += p[j] * ds[j];
            for (std::size_t j = 0; j < seq; ++j)
                ds[j] = j <= t ? p[j] * (ds[j] - dot) : 0.0F;
        }
        runReference(attentionQueryGradientCall(dq.data(), dscores.data(), k.data(), shape));
        runReference(attentionKeyGradientCall(dk.data(), dscores.data(), q.data(), shape));
        std::vector<float> dqkv(qkv.size());
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t t = 0; t < seq; ++t)
                for (std::size_t h = 0; h < heads; ++h)
                    for (std::size_t d = 0; d < hs; ++d) {
                        const std::size_t row = (b * seq + t) * 3 * width + h * hs + d;
                        dqkv[row] = dq[headMajor(b, h, t, d)];
                        dqkv[row + width] = dk[headMajor(b, h, t, d)];
                        dqkv[row + 2 * width] = dv[headMajor(b, h, t, d)];
                    }
        std::vector<float> wantDqkv(qkv.size(), 0.0F), scratch(probs.size());
        cpu::attentionBackward(wantDqkv.data(), scratch.data(), dout.data(), qkv.data(),
                               wantProbs.data(), cpuShape);
        compare(dqkv, wantDqkv);
    }

    void launchShapes()
    {
        QCOMPARE(elementwiseBlocks(0), 1U);
        QCOMPARE(elementwiseBlocks(1), 1U);
        QCOMPARE(elementwiseBlocks(256), 1U);
        QCOMPARE(elementwiseBlocks(257), 2U);
        QCOMPARE(elementwiseBlocks(std::size_t{1} << 40U), kMaxElementwiseBlocks);
        QCOMPARE(sumOfSquaresBlocks(0), 1U);
        QCOMPARE(sumOfSquaresBlocks(124475904), kMaxSumOfSquaresBlocks);
        QCOMPARE(columnChunks(0), std::size_t{1});
        QCOMPARE(columnChunks(kRowsPerColumnChunk), std::size_t{1});
        QCOMPARE(columnChunks(kRowsPerColumnChunk + 1), std::size_t{2});
        QCOMPARE(columnScratchFloats(16384, 3072, 1), std::size_t{128} * 3072);
    }

    void tokenBucketsGroupPositionsInOrder()
    {
        const std::vector<std::int32_t> tokens{3, 1, 3, 0, 1, 3};
        const TokenBuckets buckets = bucketTokens(tokens);
        QCOMPARE(buckets.tokens, (std::vector<std::int32_t>{0, 1, 3}));
        QCOMPARE(buckets.starts, (std::vector<std::int32_t>{0, 1, 3, 6}));
        QCOMPARE(buckets.positions, (std::vector<std::int32_t>{3, 1, 4, 0, 2, 5}));

        const TokenBuckets empty = bucketTokens({});
        QVERIFY(empty.tokens.empty());
        QCOMPARE(empty.starts, (std::vector<std::int32_t>{0}));
    }

    void tokenBucketsCoverEveryPositionOnce()
    {
        std::vector<std::int32_t> tokens(4096);
        for (std::size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = static_cast<std::int32_t>((i * 2654435761U) % 50257U);
        const TokenBuckets buckets = bucketTokens(tokens);
        std::vector<std::int32_t> seen = buckets.positions;
        std::sort(seen.begin(), seen.end());
        for (std::size_t i = 0; i < seen.size(); ++i)
            QCOMPARE(seen[i], static_cast<std::int32_t>(i));
        for (std::size_t b = 0; b < buckets.tokens.size(); ++b) {
            const auto begin = static_cast<std::size_t>(buckets.starts[b]);
            const auto end = static_cast<std::size_t>(buckets.starts[b + 1]);
            QVERIFY(begin < end);
            for (std::size_t p = begin; p < end; ++p) {
                const auto position = static_cast<std::size_t>(buckets.positions[p]);
                QCOMPARE(tokens[position], buckets.tokens[b]);
                if (p > begin)
                    QVERIFY(buckets.positions[p - 1] < buckets.positions[p]);
            }
        }
    }

    void gradientBucketsCoverTheLayoutInBackwardOrder_data()
    {
        QTest::addColumn<std::size_t>("layers");
        QTest::newRow("no blocks") << std::size_t{0};
        QTest::newRow("one block") << std::size_t{1};
        QTest::newRow("GPT-2 small") << std::size_t{12};
    }
    void gradientBucketsCoverTheLayoutInBackwardOrder()
    {
        QFETCH(std::size_t, layers);
        GptConfig config = GptConfig::gpt2Small();
        config.layers = layers;
        const ParameterLayout layout(config);
        const std::vector<GradientBucket> buckets = planGradientBuckets(config, layout);
        QCOMPARE(buckets.size(), layers + 2);
        QCOMPARE(buckets.front().readyAfter, GradientBucket::ReadyAfter::FinalLayerNorm);
        QCOMPARE(buckets.back().readyAfter, GradientBucket::ReadyAfter::Embeddings);
        for (std::size_t i = 1; i + 1 < buckets.size(); ++i) {
            QCOMPARE(buckets[i].readyAfter, GradientBucket::ReadyAfter::Block);
            QCOMPARE(buckets[i].layer, layers - i);
            const ParameterTensor* first =
                layout.find("h." + std::to_string(layers - i) + ".ln_1.weight");
            QVERIFY(first != nullptr);
            QCOMPARE(buckets[i].offset, first->offset);
        }
        // Disjoint and together exactly the whole buffer.
        std::vector<std::pair<std::size_t, std::size_t>> ranges;
        ranges.reserve(buckets.size());
        for (const GradientBucket& bucket : buckets)
            ranges.emplace_back(bucket.offset, bucket.size);
        std::sort(ranges.begin(), ranges.end());
        std::size_t next = 0;
        for (const auto& [offset, size] : ranges) {
            QCOMPARE(offset, next);
            QVERIFY(size > 0);
            next = offset + size;
        }
        QCOMPARE(next, layout.totalSize());
    }

    // AdamW's one launch: the chunks cover every parameter exactly once, in order, none larger
    // than asked, none across a group boundary, each with its group's weight-decay flag.
    void adamwChunksCoverTheGroupsOnce()
    {
        const ParameterLayout layout(GptConfig::gpt2Small());
        const std::vector<ParameterGroup> groups = parameterGroups(layout);
        for (const std::size_t size : {std::size_t{1000}, kAdamWChunk}) {
            const std::vector<AdamWChunk> chunks = planAdamWChunks(groups, size);
            std::size_t next = 0;
            std::size_t group = 0;
            for (const AdamWChunk& chunk : chunks) {
                QCOMPARE(chunk.offset, next);
                QVERIFY(chunk.size > 0 && chunk.size <= size);
                while (chunk.offset >= groups[group].offset + groups[group].size)
                    ++group;
                QVERIFY(chunk.offset + chunk.size <= groups[group].offset + groups[group].size);
                QCOMPARE(chunk.weightDecay, groups[group].weightDecay ? 1U : 0U);
                next += chunk.size;
            }
            QCOMPARE(next, layout.totalSize());
        }
    }

    void createRefusesBadShapesBeforeTouchingTheDevice()
    {
        GptConfig config = GptConfig::gpt2Small();
        config.width = 764;  // a multiple of the 4 heads below, not of 8
        config.heads = 4;
        auto model = CudaGpt::create(config, {1, 8, Precision::BFloat16, true, 0});
        QVERIFY(!model);
        QCOMPARE(model.error().code(), sealtrain::ErrorCode::InvalidArgument);
        QVERIFY(sealtrain::isOneSentence(model.error().message()));

        auto tooLong = CudaGpt::create(GptConfig::gpt2Small(), {1, 4096, Precision::BFloat16});
        QVERIFY(!tooLong);
        QCOMPARE(tooLong.error().code(), sealtrain::ErrorCode::InvalidArgument);
    }

    void createSaysWhenNoGpuIsVisible()
    {
        if (visibleDevices().count > 0)
            QSKIP("a GPU is visible here; test_cuda_gpt covers this machine");
        auto model = CudaGpt::create(GptConfig::gpt2Small(), {1, 8, Precision::BFloat16, true, 0});
        QVERIFY(!model);
        QCOMPARE(model.error().code(), sealtrain::ErrorCode::Unsupported);
        QVERIFY(sealtrain::isOneSentence(model.error().message()));
        QVERIFY(model.error().message().find("CPU backend") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestCudaPlan)
#include "test_cuda_plan.moc"
