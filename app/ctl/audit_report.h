// The PDF audit report for people: a summary, the verification result and how to repeat it,
// and the entries as a table. Qt's QTextDocument and QPdfWriter, so it lives in the app layer.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/result.h"

#include <filesystem>
#include <string>

namespace sealtrain::ctl {

struct ReportSource {
    std::filesystem::path bundle;
    std::string bundleSha256;   // hex
    std::string repeatCommand;  // the sealtrainctl command that reproduces the verification
};

// Writes the report to `out`. Starts an offscreen QGuiApplication when the process has none.
[[nodiscard]] Result<void> writePdfReport(const audit::VerifyReport& report,
                                          const ReportSource& source,
                                          const std::filesystem::path& out);

}  // namespace sealtrain::ctl
