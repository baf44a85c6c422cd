// Importing a base model (import_model_dialog.h).
#include "import_model_dialog.h"

#include "common/background.h"
#include "common/colors.h"
#include "common/path_field.h"
#include "common/row_model.h"
#include "session/session.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace sealtrain::gui {

ImportModelDialog::ImportModelDialog(Session& session, QWidget* parent)
    : QDialog(parent)
    , session_(session)
    , folder_(namedField(this, "importModelFolder", tr("The Hugging Face GPT-2 folder"),
                         tr("config.json, model.safetensors, vocab.json, merges.txt")))
    , name_(namedField(this, "importModelName", tr("Model name"), tr("e.g. gpt2-base")))
    , project_(namedField(this, "importModelProject", tr("Project"), tr("e.g. demo")))
    , description_(namedField(this, "importModelDescription", tr("Description"),
                              tr("where it comes from, its licence")))
    , progress_(new QProgressBar(this))
    , status_(new QLabel(this))
    , import_(new QPushButton(tr("&Import"), this))
    , close_(new QPushButton(tr("&Close"), this))
{
    setObjectName("importModelDialog");
    setWindowTitle(tr("Import a base model"));
    progress_->setObjectName("importModelProgress");
    progress_->setAccessibleName(tr("Model files sent"));
    progress_->setVisible(false);
    status_->setObjectName("importModelStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    import_->setObjectName("importModelButton");
    import_->setDefault(true);
    close_->setObjectName("importModelClose");

    auto* about = new QLabel(
        tr("A GPT-2 checkpoint in Hugging Face's layout becomes the next version of a model, to "
           "fine-tune from. The control plane checks every file and records their digests; the "
           "import is audited."),
        this);
    about->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("&Folder:"), withBrowse(folder_, PathKind::Folder, tr("The model's folder")));
    form->addRow(tr("&Name:"), name_);
    form->addRow(tr("&Project:"), project_);
    form->addRow(tr("&Description:"), description_);
    auto* buttons = new QDialogButtonBox(this);
    buttons->addButton(import_, QDialogButtonBox::AcceptRole);
    buttons->addButton(close_, QDialogButtonBox::RejectRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(about);
    layout->addLayout(form);
    layout->addWidget(progress_);
    layout->addWidget(status_);
    layout->addWidget(buttons);
    // Wide enough for a path and the server's sentence; grows with what the status says.
    folder_->setMinimumWidth(fontMetrics().averageCharWidth() * 60);
    layout->setSizeConstraint(QLayout::SetMinimumSize);

    connect(import_, &QPushButton::clicked, this, &ImportModelDialog::start);
    connect(close_, &QPushButton::clicked, this, &QDialog::reject);
}

void ImportModelDialog::start()
{
    auto client = session_.client();
    if (!client || busy_)
        return;
    const QString folder = pathOrAsk(folder_, PathKind::Folder, tr("The model's folder"));
    if (folder.isEmpty())
        return;
    api::ModelImportRequest request;
    request.folder = folder.toStdString();
    request.name = name_->text().trimmed().toStdString();
    request.project = project_->text().trimmed().toStdString();
    request.description = description_->text().trimmed().toStdString();
    busy_ = true;
    import_->setEnabled(false);
    progress_->setRange(0, 100);
    progress_->setValue(0);
    progress_->setVisible(true);
    status_->setStyleSheet({});
    status_->setText(tr("Sending the model's files…"));
    const QPointer<QProgressBar> bar(progress_);
    const auto shown = std::make_shared<std::atomic<int>>(-1);
    // Called on the call's thread: a new percentage goes to the bar on the GUI thread.
    const auto progress = [bar, shown](std::uint64_t sent, std::uint64_t total) {
        const int percent = total == 0 ? 0 : static_cast<int>(sent * 100 / total);
        if (percent == shown->exchange(percent) || bar.isNull())
            return;
        // By the slot's name: a queued call that allocates no functor for Qt to own.
        QMetaObject::invokeMethod(bar.data(), "setValue", Qt::QueuedConnection,
                                  Q_ARG(int, percent));
    };
    runInBackground(
        this,
        [client, request, progress] { return client->registry().importModel(request, progress); },
        [this](const Result<api::ModelVersionView>& version) {
            busy_ = false;
            import_->setEnabled(true);
            progress_->setVisible(false);
            if (!version) {
                status_->setStyleSheet(toneStyle(Tone::Bad));
                status_->setText(sentence(version.error()));
                return;
            }
            const QString model = QString::fromStdString(version->name);
            status_->setText(tr("Imported %1@%2 as a base model: %3, digest %4.")
                                 .arg(model)
                                 .arg(version->version)
                                 .arg(QString::fromStdString(version->shape),
                                      QString::fromStdString(version->digest)));
            emit imported(model);
        });
}

}  // namespace sealtrain::gui
