// Backups on the Operations screen (backup_tab.h).
#include "backup_tab.h"

#include "common/colors.h"

#include "common/background.h"
#include "common/path_field.h"
#include "common/row_model.h"
#include "session/session.h"

#include "sealtrain/api/data_directory_tools.h"

#include <QDate>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTemporaryFile>
#include <QVBoxLayout>

#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace sealtrain::gui {
namespace {

constexpr std::int64_t kWeek = std::int64_t{7} * 24 * 3600;

QString bytesText(std::uint64_t bytes)
{
    return QLocale().formattedDataSize(static_cast<qint64>(bytes));
}

}  // namespace

BackupTab::BackupTab(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , path_(namedField(this, "backupPath", tr("The archive to write"),
                       tr("the archive to write, e.g. /backups/sealtrain-2026-12-07.tar")))
    , take_(new QPushButton(tr("&Take a backup"), this))
    , progress_(new QProgressBar(this))
    , last_(new QLabel(this))
    , verifyPath_(namedField(this, "backupVerifyPath", tr("The archive to verify"),
                             tr("the archive to verify (empty: the last one)")))
    , verify_(new QPushButton(tr("&Verify"), this))
    , status_(new QLabel(this))
{
    setObjectName("backupTab");
    take_->setObjectName("backupTakeButton");
    verify_->setObjectName("backupVerifyButton");
    progress_->setObjectName("backupProgress");
    progress_->setAccessibleName(tr("Backup received"));
    progress_->setVisible(false);
    last_->setObjectName("backupLast");
    last_->setWordWrap(true);
    last_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setObjectName("backupStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* about = new QLabel(
        tr("The control plane writes an encrypted archive of itself, signed with the platform's "
           "audit key, while it serves; it arrives here. Keep it apart from the machine, with "
           "the keyring passphrase: a restore needs both (docs/operations/backup.md)."),
        this);
    about->setWordWrap(true);
    auto* takeRow = new QHBoxLayout;
    takeRow->addWidget(withBrowse(path_, PathKind::SaveFile, tr("Save the backup")), 1);
    takeRow->addWidget(take_);
    auto* verifyRow = new QHBoxLayout;
    verifyRow->addWidget(withBrowse(verifyPath_, PathKind::OpenFile, tr("A backup to verify")), 1);
    verifyRow->addWidget(verify_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(about);
    layout->addLayout(takeRow);
    layout->addWidget(progress_);
    layout->addWidget(last_);
    layout->addLayout(verifyRow);
    layout->addWidget(status_);
    layout->addStretch(1);

    connect(take_, &QPushButton::clicked, this, &BackupTab::take);
    connect(verify_, &QPushButton::clicked, this, &BackupTab::verify);
}

bool BackupTab::allowedFor(const Session& session)
{
    return session.holds("platform.backup");
}

BackupTab::LastText BackupTab::lastText(const std::optional<api::BackupRecord>& record,
                                        std::int64_t nowUnix)
{
    if (!record)
        return {tr("No backup was taken from this profile yet."), true};
    std::error_code error;
    const bool there = std::filesystem::exists(record->archive, error);
    const std::int64_t age = nowUnix - record->takenUnix;
    QString text =
        tr("Last backup: %1, taken %2 ago (%3) from %4: %5 audit entries, %6; "
           "SHA-256 %7.")
            .arg(QString::fromStdString(record->archive.string()), durationText(age),
                 utcText(record->takenUnix), QString::fromStdString(record->endpoint))
            .arg(record->facts.head)
            .arg(bytesText(record->facts.bytes), QString::fromStdString(record->facts.sha256));
    if (!there)
        text += QLatin1Char(' ')
                + tr("The archive is no longer there; find where it was moved, "
                     "or take a new backup.");
    else if (age > kWeek)
        text += QLatin1Char(' ') + tr("It is over a week old; take a new one.");
    return {text, !there || age > kWeek};
}

void BackupTab::reload()
{
    auto record = api::lastBackup(session_.profile());
    if (!record) {
        last_->setText(sentence(record.error()));
        last_->setStyleSheet(toneStyle(Tone::Bad));
        return;
    }
    const LastText shown = lastText(*record, QDateTime::currentSecsSinceEpoch());
    last_->setText(shown.text);
    last_->setStyleSheet(shown.warns ? toneStyle(Tone::Bad) : QString());
}

void BackupTab::clear()
{
    path_->clear();
    verifyPath_->clear();
    last_->clear();
    status_->clear();
    progress_->setVisible(false);
}

void BackupTab::setBusy(bool busy)
{
    busy_ = busy;
    take_->setEnabled(!busy);
    verify_->setEnabled(!busy);
}

void BackupTab::take()
{
    auto client = session_.client();
    if (!client || busy_)
        return;
    const QString suggested = QDir::home().filePath(
        QStringLiteral("sealtrain-%1.tar").arg(QDate::currentDate().toString(Qt::ISODate)));
    const QString path = pathOrAsk(path_, PathKind::SaveFile, tr("Save the backup"), suggested);
    if (path.isEmpty())
        return;
    if (QFileInfo::exists(path)) {
        status_->setText(tr("%1 exists already; choose another name (a backup never replaces "
                            "a file).")
                             .arg(path));
        return;
    }
    setBusy(true);
    progress_->setRange(0, 100);
    progress_->setValue(0);
    progress_->setVisible(true);
    status_->setStyleSheet({});
    status_->setText(tr("The control plane is writing the backup…"));
    const QPointer<QProgressBar> bar(progress_);
    const auto shown = std::make_shared<std::atomic<int>>(-1);
    // Called on the call's thread: a new percentage goes to the bar on the GUI thread.
    const auto progress = [bar, shown](std::uint64_t received, std::uint64_t total) {
        const int percent = total == 0 ? 0 : static_cast<int>(received * 100 / total);
        if (percent == shown->exchange(percent) || bar.isNull())
            return;
        // By the slot's name: a queued call that allocates no functor for Qt to own.
        QMetaObject::invokeMethod(bar.data(), "setValue", Qt::QueuedConnection,
                                  Q_ARG(int, percent));
    };
    runInBackground(
        this,
        [client, out = std::filesystem::path(path.toStdString()), progress] {
            return client->platform().backup(out, 0, progress);
        },
        [this, path](const Result<api::BackupReceived>& received) {
            setBusy(false);
            progress_->setVisible(false);
            if (!received) {
                status_->setText(sentence(received.error()));
                return;
            }
            const auto endpoint = session_.profile().endpoint();
            const auto noted = api::rememberBackup(
                session_.profile(), {path.toStdString(), QDateTime::currentSecsSinceEpoch(),
                                     endpoint ? endpoint->address : std::string(), *received});
            status_->setText(
                tr("Wrote %1 (%2): %3 audit entries, %4 files, %5 referenced by digest.")
                    .arg(path, bytesText(received->bytes))
                    .arg(received->head)
                    .arg(received->files)
                    .arg(received->referenced)
                + (received->referenced > 0
                       ? QLatin1Char(' ')
                             + tr("A restore needs the referenced files too: keep a copy of the "
                                  "data directory's datasets/, runs/, jobs/ and models/.")
                       : QString())
                + (noted ? QString()
                         : QLatin1Char(' ')
                               + tr("Noting it as the last one failed: %1")
                                     .arg(sentence(noted.error()))));
            path_->clear();
            reload();
        });
}

void BackupTab::verify()
{
    auto client = session_.client();
    if (!client || busy_)
        return;
    QString archive = verifyPath_->text().trimmed();
    if (archive.isEmpty()) {
        auto record = api::lastBackup(session_.profile());
        if (record && *record)
            archive = QString::fromStdString((*record)->archive.string());
    }
    if (archive.isEmpty())
        archive = pathOrAsk(verifyPath_, PathKind::OpenFile, tr("A backup to verify"));
    if (archive.isEmpty())
        return;
    if (session_.controlExecutable().empty()) {
        status_->setText(tr("Verifying needs sealtrain-control on this machine (its "
                            "verify-backup); run `sealtrainctl backup verify` where it is."));
        return;
    }
    setBusy(true);
    status_->setText(tr("Verifying %1…").arg(archive));
    runInBackground(
        this,
        [client, archive = archive.toStdString(),
         executable = session_.controlExecutable()]() -> Result<api::BackupFacts> {
            // The key it must be signed with: the platform's audit key, as this control plane
            // publishes it, in a private temporary file for the tool.
            auto keys = client->platform().signingKeys();
            if (!keys)
                return keys.error();
            QTemporaryFile keyFile;
            if (!keyFile.open())
                return Error(ErrorCode::Io, "A temporary file for the audit key could not be "
                                            "made; check the space in the temporary folder.");
            keyFile.write(keys->auditPem.data(), static_cast<qint64>(keys->auditPem.size()));
            keyFile.flush();
            return api::DataDirectoryTools(executable)
                .verifyBackup(archive, keyFile.fileName().toStdString());
        },
        [this, archive](const Result<api::BackupFacts>& facts) {
            setBusy(false);
            if (!facts) {
                status_->setText(tr("FAILED %1: %2").arg(archive, sentence(facts.error())));
                status_->setStyleSheet(toneStyle(Tone::Bad));
                return;
            }
            status_->setStyleSheet({});
            status_->setText(tr("VERIFIED %1: signed by the platform's audit key, every member "
                                "matches its manifest; taken %2 by Sealtrain %3, %4 audit "
                                "entries, %5 files (%6 referenced by digest).")
                                 .arg(archive, QString::fromStdString(facts->created),
                                      QString::fromStdString(facts->version))
                                 .arg(facts->head)
                                 .arg(facts->files)
                                 .arg(facts->referenced));
        });
}

}  // namespace sealtrain::gui
