// The overview: who is signed in, until when, what they may do, and what every user must know
// (the four-eyes warning with a single admin); the control plane's version; the workers and
// their GPUs, the running and waiting jobs, and each project's GPU-hour budget (held and used,
// Jobs.ShowPolicy), and the newest signed audit head checked with the audit key
// (audit/head_check.h), for whoever may see them.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

class QGridLayout;
class QGroupBox;
class QLabel;

namespace sealtrain::gui {

class Session;

class OverviewPage final : public QWidget {
    Q_OBJECT

public:
    explicit OverviewPage(Session& session, QWidget* parent = nullptr);

    void reload();

private:
    Session& session_;
    QLabel* who_;
    QLabel* warnings_;
    QLabel* permissions_;
    QLabel* server_;
    QLabel* workers_;
    QLabel* jobs_;
    QGroupBox* budgets_;
    QLabel* auditHead_;
    QGridLayout* budgetRows_;

    void clearBudgets();
    void showBudgets(const api::PolicySummary& policy);
};

}  // namespace sealtrain::gui
