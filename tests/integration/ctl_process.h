// sealtrainctl run as its own process, as a reviewer runs the offline checks (backup verify,
// restore, audit verify-forwarded), and the whole-file reads and writes those tests make.
// SEALTRAIN_CTL_EXECUTABLE is the built sealtrainctl (tests/CMakeLists.txt).
#pragma once

#include <QProcess>
#include <QStringList>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace sealtrain::testing {

struct CtlProcessRun {
    int code = -1;    // -1: it did not finish in time
    std::string out;  // standard output and error, merged
};

inline CtlProcessRun runCtlProcess(const QStringList& arguments, int timeoutMs = 120000)
{
    QProcess ctl;
    ctl.setProcessChannelMode(QProcess::MergedChannels);
    ctl.start(QStringLiteral(SEALTRAIN_CTL_EXECUTABLE), arguments);
    if (!ctl.waitForFinished(timeoutMs))
        return {};
    return {ctl.exitCode(), ctl.readAll().toStdString()};
}

inline std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

inline void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

}  // namespace sealtrain::testing
