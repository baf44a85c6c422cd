// The Jobs screen's "Sample" tab (issue #29): text from the selected job's checkpoint (its newest,
// or a chosen step), continuing a prompt, with the sampler's length, temperature, top-k and seed
// (Training.Sample). The control plane checks the checkpoint's signature, that the caller may
// read its dataset, and the job policy's sampling limits, runs the sampler itself and audits the
// call; the prompt travels on the sampler's standard input, never its command line. Sampling runs
// off the GUI thread; "Stop" abandons the call (the control plane stops the sampler).
#pragma once

#include <QWidget>

#include <cstdint>
#include <memory>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace sealtrain::api {
class CallCancel;
}

namespace sealtrain::gui {

class Session;

class SamplePanel final : public QWidget {
    Q_OBJECT

public:
    explicit SamplePanel(Session& session, QWidget* parent = nullptr);
    ~SamplePanel() override;

    // The job to sample from (0: none selected); what was sampled for another job is cleared.
    void showJob(std::int64_t id);

private:
    void sample();
    void stop();
    void setBusy(bool busy);

    Session& session_;
    QSpinBox* step_;
    QLineEdit* prompt_;
    QSpinBox* length_;
    QDoubleSpinBox* temperature_;
    QSpinBox* topK_;
    QSpinBox* seed_;
    QPushButton* sample_;
    QPushButton* stop_;
    QLabel* status_;
    QPlainTextEdit* output_;
    std::int64_t job_ = 0;
    std::shared_ptr<api::CallCancel> call_;
};

}  // namespace sealtrain::gui
