// AdamW against a hand-computed two-step expectation, decay groups, the learning-rate schedule
// at known steps, and global-norm clipping.
#include "sealtrain/trainer/optimizer.h"

#include <QtTest/QtTest>

#include <cmath>
#include <numbers>
#include <vector>

using namespace sealtrain::trainer;

class TestTrainerOptimizer : public QObject {
    Q_OBJECT

private slots:
    void adamwTwoSteps()
    {
        // p = (1, −2, 0.5); the first two decay (λ = 0.1), the third does not; β = (0.9, 0.999),
        // ε = 1e-8.
        // Step 1, lr 0.1, g = (0.1, −0.2, 0.3): m̂ = g, v̂ = g², so each update is
        // g/(|g| + ε) ≈ sign(g):
        //   p0 = 1 − 0.1·(0.1/0.10000001 + 0.1·1)        = 0.890000010
        //   p1 = −2 − 0.1·(−0.2/0.20000001 + 0.1·(−2))   = −1.880000005
        //   p2 = 0.5 − 0.1·(0.3/0.30000001)               = 0.400000003
        // Step 2, lr 0.05, g = (−0.1, −0.2, 0): bias corrections 1 − 0.9² = 0.19 and
        // 1 − 0.999² = 0.001999.
        //   p0: m = 0.009 − 0.01 = −0.001, m̂ = −0.0052631579; v = 9.99e-6 + 1e-5, v̂ = 0.01;
        //       p0 = 0.890000010 − 0.05·(−0.0052631579/0.10000001 + 0.089000001) = 0.888181589
        //   p1: m = −0.038, m̂ = −0.2; v = 7.996e-5, v̂ = 0.04;
        //       p1 = −1.880000005 − 0.05·(−0.2/0.20000001 − 0.1880000005) = −1.820600007
        //   p2: m = 0.027, m̂ = 0.14210526; v = 8.991e-5, v̂ = 0.044977489, √v̂ = 0.21207897;
        //       p2 = 0.400000003 − 0.05·0.14210526/0.21207898 = 0.366497092
        const std::vector<ParameterGroup> groups{{0, 2, true}, {2, 1, false}};
        AdamW optimizer(groups, 3, AdamWParams{0.9, 0.999, 1e-8, 0.1});
        std::vector<float> p{1.0F, -2.0F, 0.5F};
        optimizer.step(p, std::vector<float>{0.1F, -0.2F, 0.3F}, 0.1);
        const double afterOne[] = {0.890000010, -1.880000005, 0.400000003};
        for (std::size_t i = 0; i < 3; ++i)
            QVERIFY2(std::abs(static_cast<double>(p[i]) - afterOne[i]) < 1e-6,
                     std::to_string(p[i]).c_str());
        optimizer.step(p, std::vector<float>{-0.1F, -0.2F, 0.0F}, 0.05);
        const double afterTwo[] = {0.888181589, -1.820600007, 0.366497092};
        for (std::size_t i = 0; i < 3; ++i)
            QVERIFY2(std::abs(static_cast<double>(p[i]) - afterTwo[i]) < 1e-6,
                     std::to_string(p[i]).c_str());
        QCOMPARE(optimizer.stepCount(), std::uint64_t{2});
        QVERIFY(std::abs(static_cast<double>(optimizer.firstMoment()[2]) - 0.027) < 1e-8);
    }

    void decayGroupsFollowTheLayout()
    {
        GptConfig config;
        config.vocabSize = 10;
        config.paddedVocabSize = 16;
        config.contextLength = 4;
        config.layers = 2;
        config.heads = 1;
        config.width = 4;
        const ParameterLayout layout(config);
        const auto groups = parameterGroups(layout);
        std::size_t covered = 0;
        std::size_t decayed = 0;
        for (std::size_t i = 0; i < groups.size(); ++i) {
            QCOMPARE(groups[i].offset, covered);
            covered += groups[i].size;
            if (groups[i].weightDecay)
                decayed += groups[i].size;
            if (i > 0)
                QVERIFY(groups[i].weightDecay != groups[i - 1].weightDecay);  // merged runs
        }
        QCOMPARE(covered, layout.totalSize());
        // wte 16·4 + wpe 4·4 + per layer c_attn 4·12, c_proj 4·4, c_fc 4·16, mlp.c_proj 16·4.
        QCOMPARE(decayed, std::size_t{64 + 16 + 2 * (48 + 16 + 64 + 64)});
    }

    void weightDecayOnlyWhereGrouped()
    {
        // With zero gradients only decay moves parameters: p ← p·(1 − lr·λ) in decay groups.
        AdamW optimizer({{0, 1, true}, {1, 1, false}}, 2, AdamWParams{0.9, 0.95, 1e-8, 0.5});
        std::vector<float> p{2.0F, 2.0F};
        optimizer.step(p, std::vector<float>{0.0F, 0.0F}, 0.1);
        QCOMPARE(p[0], 2.0F * (1.0F - 0.05F));
        QCOMPARE(p[1], 2.0F);
    }

    void learningRateSchedule_data()
    {
        QTest::addColumn<int>("step");
        QTest::addColumn<double>("expected");
        // max 1e-3, min 1e-4, 10 warm-up steps, 110 in all.
        QTest::newRow("first warm-up step") << 0 << 1e-4;
        QTest::newRow("mid warm-up") << 4 << 5e-4;
        QTest::newRow("last warm-up step") << 9 << 1e-3;
        QTest::newRow("cosine start") << 10 << 1e-3;
        QTest::newRow("quarter") << 35 << 1e-4 + 0.5 * (1 + std::cos(std::numbers::pi / 4)) * 9e-4;
        QTest::newRow("half") << 60 << 5.5e-4;
        QTest::newRow("end") << 110 << 1e-4;
        QTest::newRow("after the end") << 500 << 1e-4;
    }

    void learningRateSchedule()
    {
        QFETCH(int, step);
        QFETCH(double, expected);
        const LearningRateSchedule schedule{1e-3, 1e-4, 10, 110};
        QVERIFY(schedule.validate().ok());
        QVERIFY(std::abs(schedule.at(static_cast<std::size_t>(step)) - expected) < 1e-15);
    }

    void learningRateScheduleValidation()
    {
        const auto valid = [](LearningRateSchedule schedule) { return schedule.validate().ok(); };
        QVERIFY(!valid({1e-3, 1e-4, 20, 10}));  // warm-up longer than the run
        QVERIFY(!valid({1e-3, 2e-3, 0, 10}));   // minimum above maximum
        QVERIFY(!valid({0.0, 0.0, 0, 10}));     // no rate
        QVERIFY(!valid({1e-3, 0.0, 0, 0}));     // no steps
        const auto error = LearningRateSchedule({1e-3, 1e-4, 20, 10}).validate();
        QVERIFY(sealtrain::isOneSentence(error.error().message()));
        // No warm-up: the first step is at the maximum.
        QCOMPARE(LearningRateSchedule({1e-3, 0.0, 0, 10}).at(0), 1e-3);
    }

    void clipping_data()
    {
        QTest::addColumn<double>("maxNorm");
        QTest::addColumn<bool>("clipped");
        QTest::newRow("above the limit") << 1.0 << true;
        QTest::newRow("below the limit") << 10.0 << false;
        QTest::newRow("off") << 0.0 << false;
    }

    void clipping()
    {
        QFETCH(double, maxNorm);
        QFETCH(bool, clipped);
        std::vector<float> g{3.0F, 0.0F, -4.0F};  // norm 5
        QCOMPARE(globalNorm(g), 5.0);
        QCOMPARE(clipByGlobalNorm(g, maxNorm), 5.0);
        if (clipped) {
            QVERIFY(std::abs(globalNorm(g) - maxNorm) < 1e-6);
            QVERIFY(std::abs(static_cast<double>(g[0]) - 0.6) < 1e-6);
            QVERIFY(std::abs(static_cast<double>(g[2]) + 0.8) < 1e-6);
        } else {
            QCOMPARE(g, (std::vector<float>{3.0F, 0.0F, -4.0F}));
        }
    }
};

QTEST_APPLESS_MAIN(TestTrainerOptimizer)
#include "test_trainer_optimizer.moc"
