// Settings text as JSON: a JSON object when the text starts with '{', else YAML, read with a
// bounded cost. Shared by the job-spec parser (formats/job_spec.cpp) and by clients that
// check a spec before sending it (the desktop's spec editor), so both read a text the same way.
//
// The cost is checked before anything is built: a JSON text's nesting and value count are
// counted first; a YAML text's parser events are walked first, and aliases, anchors, explicit
// tags and a second document are refused (an alias is how a few hundred bytes expand into
// gigabytes, "billion laughs", issue #27). A YAML scalar becomes an integer, a number,
// true/false, null or else a string; a quoted scalar stays a string; a key given twice is refused.
#pragma once

#include "sealtrain/base/result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace sealtrain {

struct StructuredTextRules {
    std::size_t maxDepth = 8;
    std::size_t maxNodes = 1024;
    // Named in the errors: "The job spec uses a YAML alias (line 3); write plain fields as in
    // docs/formats/job-spec.md."
    std::string_view noun = "job spec";
    std::string_view format = "docs/formats/job-spec.md";
};

// InvalidArgument with one sentence for a text past the rules, malformed JSON or YAML (with the
// line and column), or a YAML key given twice ("The field 'schedule.steps' is given twice; …").
[[nodiscard]] Result<nlohmann::json> parseStructuredText(std::string_view text,
                                                         const StructuredTextRules& rules);

}  // namespace sealtrain
