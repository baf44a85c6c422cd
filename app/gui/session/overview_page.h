// The overview: who is signed in, until when, what they may do, and what every user must know
// (the four-eyes warning with a single admin); the control plane's version; the workers and
// their GPUs, and the running and waiting jobs, for whoever may see them.
#pragma once

#include <QWidget>

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
};

}  // namespace sealtrain::gui
