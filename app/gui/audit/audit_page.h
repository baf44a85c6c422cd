// Audit: the log browsed page by page with filters (Audit.QueryEntries; the next page loads as
// the table scrolls to its end), the live log verified in the control plane (Audit.VerifyLog),
// a signed bundle exported for a reviewer (with the PDF report of `sealtrainctl audit report`
// beside it when asked, app/report), and a bundle someone sent verified here, offline, with
// the verdicts of `sealtrainctl audit verify` (audit::verifyBundle; no key needed).
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

#include <cstdint>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace sealtrain::gui {

class AuditTableModel;
class Session;

class AuditPage final : public QWidget {
    Q_OBJECT

public:
    explicit AuditPage(Session& session, QWidget* parent = nullptr);

    // The first page under the current filter (the table starts again).
    void reload();
    [[nodiscard]] AuditTableModel& model() const noexcept { return *model_; }
    [[nodiscard]] bool loading() const noexcept { return loading_; }
    // Verifies the bundle in `path` offline; returns the verdict line shown.
    QString verifyBundleFile(const QString& path, const std::string& trustedKeyPem);

private:
    void loadMore();
    void showForwarding();
    void verifyLive();
    void exportBundle();

    Session& session_;
    AuditTableModel* model_;
    QTableView* table_;
    QLineEdit* actor_;
    QLineEdit* action_;
    QComboBox* outcome_;
    QPushButton* apply_;
    QPushButton* verify_;
    QLabel* verdict_;
    QLineEdit* exportPath_;
    QPushButton* export_;
    QCheckBox* withReport_;
    QLineEdit* bundlePath_;
    QPushButton* openBundle_;
    QLabel* status_;
    QLabel* forwarding_;  // how far the SIEM has the log (GetServerInfo)
    std::uint64_t cursor_ = 0;
    bool loading_ = false;
    bool exhausted_ = false;
    int generation_ = 0;
};

}  // namespace sealtrain::gui
