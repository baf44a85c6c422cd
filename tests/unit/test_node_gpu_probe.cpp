// GPU probing (node/gpu_probe.h): version encodings, and a probe that answers on any machine
// without crashing; and what the trainer reports of its MPI and BLAS.
#include "sealtrain/node/gpu_probe.h"
#include "sealtrain/trainer/platform_info.h"

#include <QtTest/QtTest>

class TestGpuProbe : public QObject {
    Q_OBJECT

private slots:
    void cudaVersions()
    {
        QCOMPARE(QString::fromStdString(sealtrain::node::cudaVersionText(13000)),
                 QStringLiteral("13.0"));
        QCOMPARE(QString::fromStdString(sealtrain::node::cudaVersionText(12080)),
                 QStringLiteral("12.8"));
    }

    void ncclVersions()
    {
        QCOMPARE(QString::fromStdString(sealtrain::node::ncclVersionText(22803)),
                 QStringLiteral("2.28.3"));
        QCOMPARE(QString::fromStdString(sealtrain::node::ncclVersionText(2804)),
                 QStringLiteral("2.8.4"));
    }

    void probeIsConsistent()
    {
        const auto probe = sealtrain::node::probeGpu();
        // Either devices are listed, or we are told why not.
        QVERIFY(!probe.devices.empty() || !probe.deviceError.empty());
        if (!probe.driver.found)
            QVERIFY(probe.devices.empty());
        for (const auto* library : {&probe.runtime, &probe.cublas, &probe.nccl})
            QVERIFY(!library->detail.empty());
        for (const auto& device : probe.devices) {
            QVERIFY(!device.name.empty());
            QVERIFY(device.computeMajor > 0);
        }
    }

    void cpuLibrariesIdentifyThemselves()
    {
        QVERIFY(sealtrain::trainer::mpiLibraryVersion().find("MPI") != std::string::npos);
        QVERIFY(sealtrain::trainer::blasDescription().find("OpenBLAS") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestGpuProbe)
#include "test_node_gpu_probe.moc"
