// sealtrain-control's data directory tools (issue #50, item 3): `init`, `restore`,
// `verify-backup`, `describe` and `versions`. Creating, restoring and checking a data directory
// are the daemon binary's, so that no client links core/ or holds a key path: `sealtrainctl init`,
// `restore`, `backup verify` and `doctor`, and the desktop's first run (through sealtrainctl), run
// these as they run the daemon. Each writes JSON lines on standard output, a secret it takes comes
// on standard input one a line (docs/formats/control-tools.md).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace sealtrain::control {

// Adds the tools to `app`; after parsing, `exitCode` holds the chosen tool's exit status (0, or 1
// with an {"error": …} line written), and stays empty when none was chosen (the daemon serves).
void addDataDirectoryTools(CLI::App& app, std::optional<int>& exitCode);

}  // namespace sealtrain::control
