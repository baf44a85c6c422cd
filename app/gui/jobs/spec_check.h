// A job spec checked against the published JSON Schema (resources/job-spec.schema.json, built
// into the application) as one types it: the text is read as the control plane reads it (YAML,
// or JSON when it starts with '{', with the same cost bounds, base/structured_text.h), then
// validated with valijson (Debian's libvalijson-dev), and each failure becomes one line naming
// the field ("resources.device must be one of: cpu, cuda, auto"). The control plane's own parser
// still decides at submission (it also checks what a schema cannot say, such as min_lr ≤ lr);
// tests/gui/test_gui_models.cpp checks both agree on the broken specs tests/scripts/
// test_job_schema.py tries with Python's jsonschema.
#pragma once

#include <QList>
#include <QString>

#include <memory>

namespace sealtrain::gui {

struct SpecProblem {
    QString field;  // "schedule.steps"; "(top)" for the spec as a whole; empty: the text itself
    QString text;   // "must be at least 1"
};

class SpecCheck final {
public:
    // Reads the schema from the application's resources (:/sealtrain/job-spec.schema.json).
    SpecCheck();
    ~SpecCheck();
    SpecCheck(const SpecCheck&) = delete;
    SpecCheck& operator=(const SpecCheck&) = delete;

    // Empty when `text` is a spec the schema accepts.
    [[nodiscard]] QList<SpecProblem> check(const QString& text) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// "schedule.steps must be at least 1"; the text alone when no field is named.
[[nodiscard]] QString problemLine(const SpecProblem& problem);

}  // namespace sealtrain::gui
