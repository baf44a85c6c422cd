// The entry filters of `audit export`, from the control plane or from a bundle (`--from-bundle`):
// the same flags and the same parsing of times.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/result.h"

#include <CLI/CLI.hpp>

#include <string>

namespace sealtrain::ctl {

struct FilterOptions {
    std::string from;
    std::string to;
    audit::ExportFilter filter;
};

void addFilterOptions(CLI::App* command, FilterOptions& options);

// The filter, with --from and --to parsed as UTC times; InvalidArgument for a malformed time.
[[nodiscard]] Result<audit::ExportFilter> resolveFilter(const FilterOptions& options);

}  // namespace sealtrain::ctl
