// The Jobs screen's "New job" tab: a spec editor checked against the job-spec JSON Schema as one
// types it (spec_check.h; a quarter-second after the last key, and at once before submitting),
// the problems listed by field, a spec opened from a file, and the submission (Jobs.SubmitJob).
// Submit is off while the schema has something to say (it checks first when clicked before the
// check ran); the control plane's parser and policy still decide, and their refusal is shown on
// the Jobs screen like any other.
#pragma once

#include <QWidget>

#include <cstdint>
#include <memory>

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace sealtrain::gui {

class Session;
class SpecCheck;

class NewJobPanel final : public QWidget {
    Q_OBJECT

public:
    explicit NewJobPanel(Session& session, QWidget* parent = nullptr);
    ~NewJobPanel() override;

    // Checks the text now (what the timer does after typing stops); true when the schema accepts
    // it.
    bool checkNow();

signals:
    void submitted(std::int64_t id);
    void failed(const QString& sentence);

private:
    void open();
    void submit();

    Session& session_;
    std::unique_ptr<SpecCheck> check_;
    QPlainTextEdit* editor_;
    QLabel* status_;
    QListWidget* problems_;
    QPushButton* submit_;
    QTimer* timer_;
    bool busy_ = false;
};

}  // namespace sealtrain::gui
