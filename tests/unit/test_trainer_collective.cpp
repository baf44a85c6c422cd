// The one-rank collective and openCollective()'s choice without a launcher (issue #7); the MPI
// collective is exercised under mpirun by tests/mpi/test_trainer_data_parallel.cpp.
#include "sealtrain/trainer/collective.h"

#include <QtTest/QtTest>

#include <array>
#include <vector>

using sealtrain::trainer::Collective;

class TestTrainerCollective : public QObject {
    Q_OBJECT

private slots:
    void withoutLauncherOneRankNeedsNoMpi()
    {
        for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
            qunsetenv(variable);
        auto opened = sealtrain::trainer::openCollective();
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message().c_str());
        Collective& collective = **opened;
        QCOMPARE(collective.name(), std::string_view("single"));
        QCOMPARE(collective.rank(), 0);
        QCOMPARE(collective.worldSize(), 1);
    }

    void oneRankCollectivesLeaveTheData()
    {
        const auto collective = sealtrain::trainer::openSingleCollective();
        std::vector<float> gradients{1.5F, -2.0F, 0.25F};
        QVERIFY(collective->allReduceMean(gradients).ok());
        QCOMPARE(gradients, (std::vector<float>{1.5F, -2.0F, 0.25F}));
        std::vector<double> losses{3.0, 4.0};
        QVERIFY(collective->allReduceSum(losses).ok());
        QCOMPARE(losses, (std::vector<double>{3.0, 4.0}));
        std::array<std::byte, 3> bytes{std::byte{1}, std::byte{2}, std::byte{3}};
        QVERIFY(collective->broadcast(bytes, 0).ok());
        QCOMPARE(bytes[2], std::byte{3});
        QVERIFY(collective->barrier().ok());
    }

    void broadcastFromARankThatDoesNotExistIsRefused()
    {
        const auto collective = sealtrain::trainer::openSingleCollective();
        std::array<std::byte, 1> bytes{};
        const auto result = collective->broadcast(bytes, 1);
        QVERIFY(!result.ok());
        QVERIFY(sealtrain::isOneSentence(result.error().message()));
        QVERIFY(result.error().message().find("rank 0") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestTrainerCollective)
#include "test_trainer_collective.moc"
