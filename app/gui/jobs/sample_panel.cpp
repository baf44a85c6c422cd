// The Jobs screen's "Sample" tab (sample_panel.h).
#include "sample_panel.h"

#include "../session/background.h"
#include "../session/row_model.h"
#include "../session/session.h"

#include "sealtrain/api/client.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>
#include <string>
#include <vector>

namespace sealtrain::gui {
namespace {

QSpinBox* namedSpin(QWidget* parent, const char* objectName, const QString& accessibleName,
                    int minimum, int maximum, int value)
{
    auto* spin = new QSpinBox(parent);
    spin->setObjectName(objectName);
    spin->setAccessibleName(accessibleName);
    spin->setRange(minimum, maximum);
    spin->setValue(value);
    return spin;
}

}  // namespace

SamplePanel::SamplePanel(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , step_(namedSpin(this, "sampleStep", tr("Checkpoint step (0: the newest)"), 0,
                      std::numeric_limits<int>::max(), 0))
    , prompt_(namedField(this, "samplePrompt", tr("Prompt"),
                         tr("text to continue (empty: start from nothing)")))
    , length_(namedSpin(this, "sampleLength", tr("Tokens to generate"), 1, 100000, 64))
    , temperature_(new QDoubleSpinBox(this))
    , topK_(namedSpin(this, "sampleTopK", tr("Top-k (0: the whole vocabulary)"), 0, 1000000, 0))
    , seed_(namedSpin(this, "sampleSeed", tr("Sampling seed"), 0, std::numeric_limits<int>::max(),
                      0))
    , sample_(new QPushButton(tr("S&ample"), this))
    , stop_(new QPushButton(tr("Sto&p"), this))
    , status_(new QLabel(this))
    , output_(new QPlainTextEdit(this))
{
    setObjectName("samplePanel");
    step_->setSpecialValueText(tr("newest"));
    temperature_->setObjectName("sampleTemperature");
    temperature_->setAccessibleName(tr("Temperature (0: always the likeliest token)"));
    temperature_->setRange(0.0, 10.0);
    temperature_->setSingleStep(0.1);
    temperature_->setValue(1.0);
    sample_->setObjectName("sampleButton");
    stop_->setObjectName("sampleStopButton");
    stop_->setEnabled(false);
    status_->setObjectName("sampleStatus");
    status_->setWordWrap(true);
    output_->setObjectName("sampleOutput");
    output_->setAccessibleName(tr("The sampled text"));
    output_->setReadOnly(true);

    auto* form = new QFormLayout;
    form->addRow(tr("&Prompt:"), prompt_);
    auto* numbers = new QHBoxLayout;
    const auto labelled = [&](const QString& text, QWidget* field) {
        auto* label = new QLabel(text, this);
        label->setBuddy(field);
        numbers->addWidget(label);
        numbers->addWidget(field);
    };
    labelled(tr("&Checkpoint step:"), step_);
    labelled(tr("&Length:"), length_);
    labelled(tr("&Temperature:"), temperature_);
    labelled(tr("Top-&k:"), topK_);
    labelled(tr("S&eed:"), seed_);
    numbers->addStretch(1);
    numbers->addWidget(sample_);
    numbers->addWidget(stop_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(numbers);
    layout->addWidget(status_);
    layout->addWidget(output_, 1);
    connect(sample_, &QPushButton::clicked, this, &SamplePanel::sample);
    connect(prompt_, &QLineEdit::returnPressed, this, &SamplePanel::sample);
    connect(stop_, &QPushButton::clicked, this, &SamplePanel::stop);
    showJob(0);
}

SamplePanel::~SamplePanel()
{
    stop();
}

void SamplePanel::showJob(std::int64_t id)
{
    if (id == job_ && id != 0)
        return;
    stop();
    job_ = id;
    output_->clear();
    status_->setText(id == 0 ? tr("Choose a job to sample from its checkpoints.")
                             : tr("Text from job %1's checkpoint, sampled by the control plane "
                                  "(audited; you need read access to its dataset).")
                                   .arg(id));
    sample_->setEnabled(id != 0);
}

void SamplePanel::setBusy(bool busy)
{
    sample_->setEnabled(!busy && job_ != 0);
    stop_->setEnabled(busy);
}

void SamplePanel::sample()
{
    auto client = session_.client();
    if (!client || job_ == 0 || call_)
        return;
    std::vector<std::string> arguments{
        "--length",      std::to_string(length_->value()),
        "--temperature", QString::number(temperature_->value(), 'g', 6).toStdString(),
        "--top-k",       std::to_string(topK_->value()),
        "--seed",        std::to_string(seed_->value())};
    if (!prompt_->text().isEmpty())
        arguments.insert(arguments.end(), {"--prompt", prompt_->text().toStdString()});
    call_ = std::make_shared<api::CallCancel>();
    setBusy(true);
    status_->setText(tr("Sampling %1 tokens from job %2…").arg(length_->value()).arg(job_));
    runInBackground(
        this,
        [client, call = call_, job = job_, step = std::uint64_t(step_->value()),
         arguments = std::move(arguments)] {
            return client->sampleJob(job, step, arguments, call.get());
        },
        [this, call = call_, job = job_](const Result<api::SampleOutcome>& outcome) {
            if (call_ != call)
                return;  // stopped (also when another job was chosen)
            call_.reset();
            setBusy(false);
            if (!outcome) {
                status_->setText(sentence(outcome.error()));
                return;
            }
            output_->setPlainText(QString::fromStdString(outcome->text));
            status_->setText(
                tr("Sampled from job %1's checkpoint at step %2.").arg(job).arg(outcome->step));
        });
}

void SamplePanel::stop()
{
    if (!call_)
        return;
    call_->cancel();
    call_.reset();
    setBusy(false);
    status_->setText(tr("Stopped; the control plane stops the sampler."));
}

}  // namespace sealtrain::gui
