// Paths chosen in the desktop's file dialog (path_field.h).
#include "path_field.h"

#include <QCoreApplication>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace sealtrain::gui {
namespace {

QString ask(QWidget* parent, PathKind kind, const QString& title, const QString& start)
{
    switch (kind) {
    case PathKind::SaveFile: return QFileDialog::getSaveFileName(parent, title, start);
    case PathKind::OpenFile: return QFileDialog::getOpenFileName(parent, title, start);
    case PathKind::Folder: return QFileDialog::getExistingDirectory(parent, title, start);
    }
    return {};
}

}  // namespace

QString pathOrAsk(QLineEdit* field, PathKind kind, const QString& title, const QString& suggested)
{
    QString path = field->text().trimmed();
    if (!path.isEmpty())
        return path;
    path = ask(field->window(), kind, title, suggested);
    if (!path.isEmpty())
        field->setText(path);
    return path;
}

QWidget* withBrowse(QLineEdit* field, PathKind kind, const QString& title, const QString& suggested)
{
    auto* row = new QWidget(field->parentWidget());
    auto* browse = new QPushButton(QCoreApplication::translate("Path", "Bro&wse…"), row);
    browse->setObjectName(field->objectName() + QStringLiteral("Browse"));
    browse->setAccessibleName(
        QCoreApplication::translate("Path", "Browse for %1").arg(field->accessibleName()));
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(field, 1);
    layout->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, field, [field, kind, title, suggested] {
        const QString current = field->text().trimmed();
        const QString chosen =
            ask(field->window(), kind, title, current.isEmpty() ? suggested : current);
        if (!chosen.isEmpty())
            field->setText(chosen);
    });
    return row;
}

}  // namespace sealtrain::gui
