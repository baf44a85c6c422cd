// The Jobs screen's "Sample" tab (sample_panel.h).
#include "sample_panel.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"

#include "sealtrain/api/client.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
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

// The sampled text with each control character other than a newline or a tab written as \xNN,
// so that what a model produced is seen, not swallowed or drawn as an empty box.
QString visibleText(const std::string& text)
{
    const QString given = QString::fromStdString(text);
    QString shown;
    shown.reserve(given.size());
    for (const QChar c : given) {
        if (c != '\n' && c != '\t' && c.category() == QChar::Other_Control)
            shown += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QChar('0'));
        else
            shown += c;
    }
    return shown;
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
    , seed_(
          namedSpin(this, "sampleSeed", tr("Sampling seed"), 0, std::numeric_limits<int>::max(), 0))
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
    output_->setTabChangesFocus(true);

    // Two fields a row, so the tab stays narrow enough for the jobs table beside it.
    auto* grid = new QGridLayout;
    const auto place = [&](int row, int column, const QString& text, QWidget* field) {
        auto* label = new QLabel(text, this);
        label->setBuddy(field);
        grid->addWidget(label, row, column * 2);
        grid->addWidget(field, row, column * 2 + 1);
    };
    auto* promptLabel = new QLabel(tr("&Prompt:"), this);
    promptLabel->setBuddy(prompt_);
    grid->addWidget(promptLabel, 0, 0);
    grid->addWidget(prompt_, 0, 1, 1, 3);
    place(1, 0, tr("&Checkpoint step:"), step_);
    place(1, 1, tr("&Length:"), length_);
    place(2, 0, tr("&Temperature:"), temperature_);
    place(2, 1, tr("Top-&k:"), topK_);
    place(3, 0, tr("S&eed:"), seed_);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(sample_);
    buttons->addWidget(stop_);
    grid->addLayout(buttons, 3, 2, 1, 2);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(grid);
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
            return client->training().sampleJob(job, step, arguments, call.get());
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
            output_->setPlainText(visibleText(outcome->text));
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
