// The compliance report, for auditors (audit.read and audit.export; issue #51): HIPAA 164.312 and
// SOC 2 controls judged by the control plane from its live evidence over a period
// (Compliance.Report), written as the PDF of `sealtrainctl compliance report` with its signed
// evidence bundle beside it and, if asked, the JSON for programs (app/report: the same code, the
// same files); the verdicts in a table, and the audit entries a chosen control cites, read from
// the evidence bundle once it verified, in the audit browser's table.
#pragma once

#include "common/row_model.h"

#include "sealtrain/api/compliance_views.h"
#include "sealtrain/audit/entry.h"

#include <QWidget>

#include <vector>

class QCheckBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace sealtrain::gui {

class AuditTableModel;
class Session;

class ComplianceTableModel final : public RowModel<api::ComplianceControlView> {
    Q_OBJECT

public:
    enum Column { Framework, Control, Verdict, Cited, Title };
    explicit ComplianceTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::ComplianceControlView& control, int column,
                                int role) const override;
};

class ComplianceTab final : public QWidget {
    Q_OBJECT

public:
    explicit ComplianceTab(Session& session, QWidget* parent = nullptr);

    [[nodiscard]] static bool allowedFor(const Session& session);
    void clear();
    [[nodiscard]] ComplianceTableModel& controls() const noexcept { return *controls_; }
    [[nodiscard]] AuditTableModel& cited() const noexcept { return *citedModel_; }
    [[nodiscard]] bool busy() const noexcept { return busy_; }

private:
    void make();
    void showCited();

    Session& session_;
    QCheckBox* fromOn_;
    QDateEdit* from_;
    QCheckBox* toOn_;
    QDateEdit* to_;
    QLineEdit* pdf_;
    QCheckBox* json_;
    QPushButton* make_;
    QLabel* summary_;
    ComplianceTableModel* controls_;
    QTableView* table_;
    AuditTableModel* citedModel_;
    QTableView* citedTable_;
    std::vector<audit::Entry> entries_;  // the evidence bundle's, verified
    bool busy_ = false;
};

}  // namespace sealtrain::gui
