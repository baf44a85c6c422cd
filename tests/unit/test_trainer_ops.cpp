// The CPU operations' backward passes against central finite differences, in double precision:
// for L = Σ w ⊙ forward(inputs) with fixed random w, backward(dout = w) must equal ∂L/∂input.
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_ops.h"

#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

namespace cpu = sealtrain::trainer::cpu;
using Vector = std::vector<double>;
using Inputs = std::vector<Vector>;

namespace {

Vector randomVector(std::size_t size, std::uint64_t stream, double scale = 1.0)
{
    const sealtrain::trainer::CounterRng rng(2024);
    Vector values(size);
    for (std::size_t i = 0; i < size; ++i)
        values[i] = scale * rng.normal(stream, i);
    return values;
}

double weightedSum(const Vector& outputs, const Vector& weights)
{
    double sum = 0.0;
    for (std::size_t i = 0; i < outputs.size(); ++i)
        sum += outputs[i] * weights[i];
    return sum;
}

struct Operation {
    // The outputs for the inputs.
    std::function<Vector(const Inputs&)> forward;
    // The gradients of Σ dout ⊙ outputs with respect to each input (accumulated from zero).
    std::function<Inputs(const Inputs&, const Vector& dout)> backward;
};

// Compares backward with central differences for every input element; returns a description
// of the first disagreement, or an empty string.
std::string checkGradients(const Operation& op, Inputs inputs, double tolerance = 1e-7)
{
    const Vector outputs = op.forward(inputs);
    const Vector dout = randomVector(outputs.size(), 999);
    const Inputs analytic = op.backward(inputs, dout);
    const double h = 1e-6;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        for (std::size_t i = 0; i < inputs[k].size(); ++i) {
            const double saved = inputs[k][i];
            inputs[k][i] = saved + h;
            const double plus = weightedSum(op.forward(inputs), dout);
            inputs[k][i] = saved - h;
            const double minus = weightedSum(op.forward(inputs), dout);
            inputs[k][i] = saved;
            const double numeric = (plus - minus) / (2 * h);
            const double error = std::abs(analytic[k][i] - numeric);
            if (!(error <= tolerance * (1.0 + std::abs(numeric))))
                return "input " + std::to_string(k) + " element " + std::to_string(i)
                       + ": backward " + std::to_string(analytic[k][i]) + ", finite difference "
                       + std::to_string(numeric);
        }
    }
    return {};
}

Operation geluOperation(double backwardScale = 1.0)
{
    return {[](const Inputs& in) {
                Vector out(in[0].size());
                cpu::geluForward(out.data(), in[0].data(), out.size());
                return out;
            },
            [backwardScale](const Inputs& in, const Vector& dout) {
                Inputs grads{Vector(in[0].size())};
                Vector scaled = dout;
                for (double& value : scaled)
                    value *= backwardScale;
                cpu::geluBackward(grads[0].data(), scaled.data(), in[0].data(), in[0].size());
                return grads;
            }};
}

}  // namespace

class TestTrainerOps : public QObject {
    Q_OBJECT

private slots:
    void checkerCatchesAWrongBackward()
    {
        // The harness must be able to fail: a GELU backward off by 0.1 % is caught.
        const Inputs inputs{randomVector(16, 1, 2.0)};
        QVERIFY(checkGradients(geluOperation(), inputs).empty());
        QVERIFY(!checkGradients(geluOperation(1.001), inputs).empty());
    }

    void gelu()
    {
        const std::string error = checkGradients(geluOperation(), {randomVector(64, 2, 3.0)});
        QVERIFY2(error.empty(), error.c_str());
        // GPT-2's tanh approximation at known points.
        const Vector in{-3.0, -1.0, 0.0, 0.5, 2.0};
        Vector out(in.size());
        cpu::geluForward(out.data(), in.data(), in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const double x = in[i];
            const double expected = 0.5 * x
                                    * (1.0
                                       + std::tanh(std::sqrt(2.0 / std::numbers::pi)
                                                   * (x + 0.044715 * std::pow(x, 3.0))));
            QVERIFY(std::abs(out[i] - expected) < 1e-15);
        }
    }

    void residual()
    {
        const Operation op{
            [](const Inputs& in) {
                Vector out(in[0].size());
                cpu::residualForward(out.data(), in[0].data(), in[1].data(), out.size());
                return out;
            },
            [](const Inputs& in, const Vector& dout) {
                Inputs grads{Vector(in[0].size()), Vector(in[1].size())};
                cpu::residualBackward(grads[0].data(), grads[1].data(), dout.data(), dout.size());
                return grads;
            }};
        const std::string error = checkGradients(op, {randomVector(12, 3), randomVector(12, 4)});
        QVERIFY2(error.empty(), error.c_str());
    }

    void encoder()
    {
        const std::size_t vocab = 5;
        const std::size_t batch = 2;
        const std::size_t seq = 4;
        const std::size_t width = 3;
        // Token 1 appears three times: its gradient rows must add up.
        const std::vector<std::int32_t> tokens{1, 4, 1, 0, 3, 1, 2, 4};
        const Operation op{[&](const Inputs& in) {
                               Vector out(batch * seq * width);
                               cpu::encoderForward(out.data(), tokens.data(), in[0].data(),
                                                   in[1].data(), batch, seq, width);
                               return out;
                           },
                           [&](const Inputs& in, const Vector& dout) {
                               Inputs grads{Vector(in[0].size()), Vector(in[1].size())};
                               cpu::encoderBackward(grads[0].data(), grads[1].data(), dout.data(),
                                                    tokens.data(), batch, seq, width);
                               return grads;
                           }};
        const std::string error =
            checkGradients(op, {randomVector(vocab * width, 5), randomVector(seq * width, 6)});
        QVERIFY2(error.empty(), error.c_str());
    }

    void layerNorm_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("width");
        QTest::newRow("3x5") << 3 << 5;
        QTest::newRow("1x16") << 1 << 16;
        QTest::newRow("4x2") << 4 << 2;
    }

    void layerNorm()
    {
        QFETCH(int, rows);
        QFETCH(int, width);
        const auto r = static_cast<std::size_t>(rows);
        const auto c = static_cast<std::size_t>(width);
        const Operation op{
            [&](const Inputs& in) {
                Vector out(r * c);
                Vector mean(r);
                Vector rstd(r);
                cpu::layerNormForward(out.data(), mean.data(), rstd.data(), in[0].data(),
                                      in[1].data(), in[2].data(), r, c);
                return out;
            },
            [&](const Inputs& in, const Vector& dout) {
                Vector out(r * c);
                Vector mean(r);
                Vector rstd(r);
                cpu::layerNormForward(out.data(), mean.data(), rstd.data(), in[0].data(),
                                      in[1].data(), in[2].data(), r, c);
                Inputs grads{Vector(r * c), Vector(c), Vector(c)};
                cpu::layerNormBackward(grads[0].data(), grads[1].data(), grads[2].data(),
                                       dout.data(), in[0].data(), in[1].data(), mean.data(),
                                       rstd.data(), r, c);
                return grads;
            }};
        Vector weight = randomVector(c, 8, 0.5);
        for (double& w : weight)
            w += 1.0;
        const std::string error =
            checkGradients(op, {randomVector(r * c, 7, 2.0), weight, randomVector(c, 9)});
        QVERIFY2(error.empty(), error.c_str());

        // Normalised rows: mean 0 and variance ≈ 1 (within ε) with unit weight and zero bias.
        const Vector in = randomVector(r * c, 10, 3.0);
        const Vector ones(c, 1.0);
        const Vector zeros(c, 0.0);
        Vector out(r * c);
        Vector mean(r);
        Vector rstd(r);
        cpu::layerNormForward(out.data(), mean.data(), rstd.data(), in.data(), ones.data(),
                              zeros.data(), r, c);
        for (std::size_t row = 0; row < r; ++row) {
            double sum = 0.0;
            double squares = 0.0;
            for (std::size_t i = 0; i < c; ++i) {
                sum += out[row * c + i];
                squares += out[row * c + i] * out[row * c + i];
            }
            QVERIFY(std::abs(sum / static_cast<double>(c)) < 1e-12);
            QVERIFY(std::abs(squares / static_cast<double>(c) - 1.0) < 1e-3);
        }
    }

    void matmul_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("inWidth");
        QTest::addColumn<int>("outWidth");
        QTest::addColumn<bool>("withBias");
        QTest::newRow("4x3->5, bias") << 4 << 3 << 5 << true;
        QTest::newRow("2x6->3, no bias") << 2 << 6 << 3 << false;
        QTest::newRow("1x1->1, bias") << 1 << 1 << 1 << true;
    }

    void matmul()
    {
        QFETCH(int, rows);
        QFETCH(int, inWidth);
        QFETCH(int, outWidth);
        QFETCH(bool, withBias);
        const cpu::MatmulShape shape{static_cast<std::size_t>(rows),
                                     static_cast<std::size_t>(inWidth),
                                     static_cast<std::size_t>(outWidth)};
        const Operation op{
            [&](const Inputs& in) {
                Vector out(shape.rows * shape.outWidth);
                cpu::matmulForward(out.data(), in[0].data(), in[1].data(),
                                   withBias ? in[2].data() : nullptr, shape);
                return out;
            },
            [&](const Inputs& in, const Vector& dout) {
                Inputs grads{Vector(in[0].size()), Vector(in[1].size()), Vector(in[2].size())};
                cpu::matmulBackward(grads[0].data(), grads[1].data(),
                                    withBias ? grads[2].data() : nullptr, dout.data(), in[0].data(),
                                    in[1].data(), shape);
                return grads;
            }};
        const std::string error =
            checkGradients(op, {randomVector(shape.rows * shape.inWidth, 11),
                                randomVector(shape.inWidth * shape.outWidth, 12),
                                randomVector(shape.outWidth, 13)});
        QVERIFY2(error.empty(), error.c_str());

        // The (in, out) convention: out[r][o] = Σ_i in[r][i] · W[i][o] + b[o].
        const Vector in = randomVector(shape.rows * shape.inWidth, 14);
        const Vector weight = randomVector(shape.inWidth * shape.outWidth, 15);
        const Vector bias = randomVector(shape.outWidth, 16);
        Vector out(shape.rows * shape.outWidth);
        cpu::matmulForward(out.data(), in.data(), weight.data(), withBias ? bias.data() : nullptr,
                           shape);
        for (std::size_t r = 0; r < shape.rows; ++r) {
            for (std::size_t o = 0; o < shape.outWidth; ++o) {
                double expected = withBias ? bias[o] : 0.0;
                for (std::size_t i = 0; i < shape.inWidth; ++i)
                    expected += in[r * shape.inWidth + i] * weight[i * shape.outWidth + o];
                QVERIFY(std::abs(out[r * shape.outWidth + o] - expected) < 1e-12);
            }
        }
    }

    void lmHead()
    {
        const cpu::LmHeadShape shape{4, 3, 6};
        const Operation op{[&](const Inputs& in) {
                               Vector out(shape.rows * shape.paddedVocab);
                               cpu::lmHeadForward(out.data(), in[0].data(), in[1].data(), shape);
                               return out;
                           },
                           [&](const Inputs& in, const Vector& dout) {
                               Inputs grads{Vector(in[0].size()), Vector(in[1].size())};
                               cpu::lmHeadBackward(grads[0].data(), grads[1].data(), dout.data(),
                                                   in[0].data(), in[1].data(), shape);
                               return grads;
                           }};
        const std::string error =
            checkGradients(op, {randomVector(shape.rows * shape.width, 17),
                                randomVector(shape.paddedVocab * shape.width, 18)});
        QVERIFY2(error.empty(), error.c_str());
    }

    void attention_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("seq");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("width");
        QTest::newRow("B2 T4 H2 C6") << 2 << 4 << 2 << 6;
        QTest::newRow("B1 T5 H1 C3") << 1 << 5 << 1 << 3;
        QTest::newRow("B1 T1 H2 C4") << 1 << 1 << 2 << 4;
        QTest::newRow("B1 T3 H4 C8") << 1 << 3 << 4 << 8;
        // Longer than one block of 64 query positions: the blocked GEMMs' edges.
        QTest::newRow("B1 T67 H1 C2") << 1 << 67 << 1 << 2;
    }

    void attention()
    {
        QFETCH(int, batch);
        QFETCH(int, seq);
        QFETCH(int, heads);
        QFETCH(int, width);
        const cpu::AttentionShape shape{
            static_cast<std::size_t>(batch), static_cast<std::size_t>(seq),
            static_cast<std::size_t>(heads), static_cast<std::size_t>(width)};
        const std::size_t rows = shape.batch * shape.seq;
        const std::size_t attSize = shape.batch * shape.heads * shape.seq * shape.seq;
        const Operation op{[&](const Inputs& in) {
                               Vector out(rows * shape.width);
                               Vector att(attSize);
                               cpu::attentionForward(out.data(), att.data(), in[0].data(), shape);
                               return out;
                           },
                           [&](const Inputs& in, const Vector& dout) {
                               Vector out(rows * shape.width);
                               Vector att(attSize);
                               cpu::attentionForward(out.data(), att.data(), in[0].data(), shape);
                               Inputs grads{Vector(in[0].size())};
                               Vector scratch(attSize);
                               cpu::attentionBackward(grads[0].data(), scratch.data(), dout.data(),
                                                      in[0].data(), att.data(), shape);
                               return grads;
                           }};
        const Vector qkv = randomVector(rows * 3 * shape.width, 19, 1.5);
        const std::string error = checkGradients(op, {qkv});
        QVERIFY2(error.empty(), error.c_str());

        // Causal: changing the last position's q, k and v leaves every earlier output as it was.
        const Vector before = op.forward({qkv});
        Vector changed = qkv;
        for (std::size_t b = 0; b < shape.batch; ++b) {
            for (std::size_t i = 0; i < 3 * shape.width; ++i)
                changed[((b + 1) * shape.seq - 1) * 3 * shape.width + i] += 1.0;
        }
        const Vector after = op.forward({changed});
        for (std::size_t b = 0; b < shape.batch; ++b) {
            for (std::size_t i = 0; i < (shape.seq - 1) * shape.width; ++i)
                QCOMPARE(after[b * shape.seq * shape.width + i],
                         before[b * shape.seq * shape.width + i]);
        }
        // The first position attends only to itself: its output is its own v.
        const Vector out = op.forward({qkv});
        for (std::size_t b = 0; b < shape.batch; ++b) {
            for (std::size_t i = 0; i < shape.width; ++i)
                QVERIFY(std::abs(out[b * shape.seq * shape.width + i]
                                 - qkv[b * shape.seq * 3 * shape.width + 2 * shape.width + i])
                        < 1e-14);
        }
    }

    void crossEntropy()
    {
        const cpu::CrossEntropyShape shape{5, 5, 8};
        const std::vector<std::int32_t> targets{0, 4, -1, 2, 4};
        const Operation op{[&](const Inputs& in) {
                               Vector losses(shape.rows);
                               Vector probs(shape.rows * shape.paddedVocab);
                               cpu::crossEntropyForward(losses.data(), probs.data(), in[0].data(),
                                                        targets.data(), shape);
                               return losses;
                           },
                           [&](const Inputs& in, const Vector& dlosses) {
                               Vector losses(shape.rows);
                               Vector probs(shape.rows * shape.paddedVocab);
                               cpu::crossEntropyForward(losses.data(), probs.data(), in[0].data(),
                                                        targets.data(), shape);
                               Inputs grads{Vector(in[0].size())};
                               cpu::crossEntropyBackward(grads[0].data(), dlosses.data(),
                                                         probs.data(), targets.data(), shape);
                               return grads;
                           }};
        const Vector logits = randomVector(shape.rows * shape.paddedVocab, 20, 3.0);
        const std::string error = checkGradients(op, {logits});
        QVERIFY2(error.empty(), error.c_str());

        // Values: −log softmax over the first `vocab` logits; padding and masked rows add nothing.
        Vector losses(shape.rows);
        Vector probs(shape.rows * shape.paddedVocab);
        const std::size_t counted = cpu::crossEntropyForward(losses.data(), probs.data(),
                                                             logits.data(), targets.data(), shape);
        QCOMPARE(counted, std::size_t{4});
        for (std::size_t r = 0; r < shape.rows; ++r) {
            double sum = 0.0;
            for (std::size_t i = 0; i < shape.vocab; ++i)
                sum += std::exp(logits[r * shape.paddedVocab + i]);
            for (std::size_t i = shape.vocab; i < shape.paddedVocab; ++i)
                QCOMPARE(probs[r * shape.paddedVocab + i], 0.0);
            if (targets[r] < 0) {
                QCOMPARE(losses[r], 0.0);
                continue;
            }
            const double expected =
                std::log(sum)
                - logits[r * shape.paddedVocab + static_cast<std::size_t>(targets[r])];
            QVERIFY(std::abs(losses[r] - expected) < 1e-12);
        }
    }

    void floatMatchesDouble()
    {
        // The float instantiation computes the same function (to catch a type slip).
        const Vector in = randomVector(32, 21, 2.0);
        Vector outDouble(in.size());
        cpu::geluForward(outDouble.data(), in.data(), in.size());
        std::vector<float> inFloat(in.begin(), in.end());
        std::vector<float> outFloat(in.size());
        cpu::geluForward(outFloat.data(), inFloat.data(), in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
            QVERIFY(std::abs(static_cast<double>(outFloat[i]) - outDouble[i]) < 1e-6);

        // The softmaxes too (their float exponential is the vectorised one): cross-entropy...
        const cpu::CrossEntropyShape ce{4, 61, 64};
        const Vector logits = randomVector(ce.rows * ce.paddedVocab, 22, 3.0);
        const std::vector<std::int32_t> targets{0, 60, 7, 33};
        Vector lossesDouble(ce.rows);
        Vector probsDouble(logits.size());
        cpu::crossEntropyForward(lossesDouble.data(), probsDouble.data(), logits.data(),
                                 targets.data(), ce);
        const std::vector<float> logitsFloat(logits.begin(), logits.end());
        std::vector<float> lossesFloat(ce.rows);
        std::vector<float> probsFloat(logits.size());
        cpu::crossEntropyForward(lossesFloat.data(), probsFloat.data(), logitsFloat.data(),
                                 targets.data(), ce);
        for (std::size_t r = 0; r < ce.rows; ++r)
            QVERIFY(std::abs(static_cast<double>(lossesFloat[r]) - lossesDouble[r])
                    < 1e-6 * lossesDouble[r]);
        for (std::size_t i = 0; i < logits.size(); ++i)
            QVERIFY(std::abs(static_cast<double>(probsFloat[i]) - probsDouble[i]) < 1e-6);
        // ... and attention's.
        const cpu::AttentionShape shape{2, 9, 2, 8};
        const Vector qkv = randomVector(shape.batch * shape.seq * 3 * shape.width, 23, 2.0);
        Vector attDouble(shape.batch * shape.heads * shape.seq * shape.seq);
        Vector yDouble(shape.batch * shape.seq * shape.width);
        cpu::attentionForward(yDouble.data(), attDouble.data(), qkv.data(), shape);
        const std::vector<float> qkvFloat(qkv.begin(), qkv.end());
        std::vector<float> attFloat(attDouble.size());
        std::vector<float> yFloat(yDouble.size());
        cpu::attentionForward(yFloat.data(), attFloat.data(), qkvFloat.data(), shape);
        for (std::size_t i = 0; i < attDouble.size(); ++i)
            QVERIFY(std::abs(static_cast<double>(attFloat[i]) - attDouble[i]) < 1e-6);
        for (std::size_t i = 0; i < yDouble.size(); ++i)
            QVERIFY(std::abs(static_cast<double>(yFloat[i]) - yDouble[i]) < 1e-5);
    }

    void geluFloatIsAccurate()
    {
        // The float GELU computes its exponential in its own vectorised code: against the tanh
        // formula in double it is within a few float ulp, relative, from −12 to 12 and beyond
        // (far left the output is 0 where the exact one is below 1e-35), and so is its derivative.
        std::vector<float> in;
        for (int i = -12 * 64; i <= 12 * 64; ++i)
            in.push_back(static_cast<float>(i) / 64.0F);
        for (const float x : {1e-20F, -1e-20F, 1e-3F, -1e-3F, 30.0F, -30.0F, 1e4F, -1e4F})
            in.push_back(x);
        std::vector<float> out(in.size());
        std::vector<float> grad(in.size());
        const std::vector<float> ones(in.size(), 1.0F);
        cpu::geluForward(out.data(), in.data(), in.size());
        cpu::geluBackward(grad.data(), ones.data(), in.data(), in.size());
        // The reference: 0.5·(1 + tanh(u)) as 1 / (1 + e^(−2u)) in double, which does not cancel
        // to 0 for very negative u as 1 + tanh(u) does. Rounding u to float moves e^(2u) by about
        // |2u| float ulp, relative, in any float implementation: the bound grows with |2u|.
        const double c = std::sqrt(2.0 / std::numbers::pi);
        for (std::size_t i = 0; i < in.size(); ++i) {
            const double x = in[i];
            const double twoU = 2.0 * c * (x + 0.044715 * x * x * x);
            const double gate = 1.0 / (1.0 + std::exp(-twoU));
            const double relative = 1e-6 + 3e-7 * std::abs(twoU);
            const double expected = x * gate;
            const double expectedGrad =
                gate + 2.0 * x * gate * (1.0 - gate) * c * (1.0 + 3.0 * 0.044715 * x * x);
            const double error = std::abs(static_cast<double>(out[i]) - expected);
            const double gradError = std::abs(static_cast<double>(grad[i]) - expectedGrad);
            QVERIFY2(
                error <= relative * std::abs(expected) + 1e-35,
                qPrintable(QString("GELU(%1) = %2, expected %3").arg(x).arg(out[i]).arg(expected)));
            QVERIFY2(
                gradError <= relative * std::abs(expectedGrad) + 1e-7,
                qPrintable(
                    QString("GELU'(%1) = %2, expected %3").arg(x).arg(grad[i]).arg(expectedGrad)));
        }
    }
};

QTEST_APPLESS_MAIN(TestTrainerOps)
#include "test_trainer_ops.moc"
