// The audit browser's table: decoded entries as Audit.QueryEntries returns them, page after page
// (appendRows), newest first.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"
#include "sealtrain/audit/entry.h"

namespace sealtrain::gui {

class AuditTableModel final : public RowModel<api::AuditEntryView> {
    Q_OBJECT

public:
    enum Column { Sequence, Time, Actor, Action, Target, Outcome, Reason };
    explicit AuditTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::AuditEntryView& entry, int column,
                                int role) const override;
};

// An entry decoded from a verified bundle as the browser shows entries the control plane decoded
// (Audit.QueryEntries' fields: a keyed hash as hex, a text detail as text).
[[nodiscard]] api::AuditEntryView entryView(const audit::Entry& entry);

// "key=value key=value" of an entry's details, keyed hashes shortened.
[[nodiscard]] QString detailsText(const api::AuditEntryView& entry);

}  // namespace sealtrain::gui
