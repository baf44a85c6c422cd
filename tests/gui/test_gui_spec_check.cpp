// The spec editor's schema check (issue #29, app/gui/jobs/spec_check.h), with no server: the
// example specs pass, and each broken spec that tests/scripts/test_job_schema.py gives Python's
// jsonschema and `sealtrainctl job validate` is refused here too, naming the same field; YAML is
// read with the control plane's bounds (an alias is refused before anything is built); and the
// "New job" tab lists the problems as one types, with Submit held back until there are none.
#include "jobs/new_job_panel.h"
#include "jobs/spec_check.h"
#include "session/session.h"

#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <functional>

using namespace sealtrain;
using namespace sealtrain::gui;

namespace {

QString readExample(const QString& name)
{
    QFile file(QStringLiteral(SEALTRAIN_SOURCE_DIR "/resources/jobs/") + name);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("Cannot read the example spec %s.", qPrintable(name));
    return QString::fromUtf8(file.readAll());
}

template <typename T>
T* child(const QWidget& parent, const char* name)
{
    auto* found = parent.findChild<T*>(name);
    if (found == nullptr)
        qFatal("no widget named %s", name);
    return found;
}

QStringList lines(const QList<SpecProblem>& problems)
{
    QStringList out;
    for (const SpecProblem& problem : problems)
        out << problemLine(problem);
    return out;
}

}  // namespace

class TestGuiSpecCheck : public QObject {
    Q_OBJECT

private slots:
    void examplesPass()
    {
        const SpecCheck check;
        const QDir examples(QStringLiteral(SEALTRAIN_SOURCE_DIR "/resources/jobs"));
        const QStringList names = examples.entryList(QDir::Files);
        QVERIFY(names.size() >= 2);  // JSON and YAML
        for (const QString& name : names) {
            const auto problems = check.check(readExample(name));
            QVERIFY2(problems.isEmpty(), qPrintable(name + ": " + lines(problems).join("; ")));
        }
    }

    void brokenSpecsNameTheField_data()
    {
        using Json = nlohmann::json;
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("expected");
        const Json base = Json::parse(readExample("fortunes-small.json").toStdString());
        const auto broken = [&](const char* tag, const std::function<void(Json&)>& edit,
                                const char* expected) {
            Json spec = base;
            edit(spec);
            QTest::newRow(tag) << QString::fromStdString(spec.dump(2)) << QString(expected);
        };
        // The same cases as tests/scripts/test_job_schema.py.
        broken(
            "schedule.steps", [](Json& s) { s["schedule"].erase("steps"); },
            "schedule.steps is required");
        broken(
            "model.layerz", [](Json& s) { s["model"]["layerz"] = 2; },
            "model.layerz is not a field of a version 1 job spec");
        broken(
            "resources.device", [](Json& s) { s["resources"]["device"] = "tpu"; },
            "resources.device must be one of: cpu, cuda, auto");
        broken(
            "name", [](Json& s) { s["name"] = "Not A Name"; },
            "name must match ^[a-z0-9_-]{1,64}$");
        broken(
            "priority", [](Json& s) { s["priority"] = 1000; }, "priority must be at most 100");
        broken(
            "limits.max_restarts",
            [](Json& s) {
                s["limits"] = {{"max_restarts", -1}};
            },
            "limits.max_restarts must be at least 0");
        broken(
            "spec_version", [](Json& s) { s["spec_version"] = 2; }, "spec_version must be 1");
        broken(
            "resources.gpus_per_node",
            [](Json& s) {
                s["resources"]["device"] = "cuda";
                s["resources"]["gpus_per_node"] = 0;
            },
            "resources.gpus_per_node must be at least 1");
        broken(
            "schedule.steps type", [](Json& s) { s["schedule"]["steps"] = "many"; },
            "schedule.steps must be an integer");
        broken(
            "project missing", [](Json& s) { s.erase("project"); }, "project is required");
    }

    void brokenSpecsNameTheField()
    {
        QFETCH(QString, spec);
        QFETCH(QString, expected);
        const SpecCheck check;
        const QStringList found = lines(check.check(spec));
        QVERIFY2(found.contains(expected), qPrintable(found.join("; ")));
    }

    void yamlReadAsTheControlPlaneReadsIt()
    {
        const SpecCheck check;
        // The YAML example with one field broken is refused by field, like the JSON one.
        const QString yaml = readExample("gpt2-124m-h200.yaml");
        QVERIFY(check.check(yaml).isEmpty());
        QString wrong = yaml;
        wrong.replace(QRegularExpression("priority: *-?[0-9]+"), "priority: 500");
        if (wrong == yaml)
            wrong += "\npriority: 500\n";
        QVERIFY2(lines(check.check(wrong)).contains("priority must be at most 100"),
                 qPrintable(lines(check.check(wrong)).join("; ")));
        // An alias (the "billion laughs" shape) is refused before any node is built.
        const auto alias = check.check("name: &a x\nproject: *a\n");
        QCOMPARE(alias.size(), 1);
        QVERIFY2(alias.front().text.contains("YAML"), qPrintable(alias.front().text));
        // Bad YAML says where.
        const auto bad = check.check("name: [unclosed\n");
        QCOMPARE(bad.size(), 1);
        QVERIFY2(bad.front().text.contains("line"), qPrintable(bad.front().text));
        // Larger than the control plane takes.
        const auto huge = check.check("name: " + QString(qsizetype{70} * 1024, 'x'));
        QCOMPARE(huge.size(), 1);
        QVERIFY2(huge.front().text.contains("larger than"), qPrintable(huge.front().text));
        // Not a mapping.
        QVERIFY(!check.check("[1, 2]").isEmpty());
    }

    void newJobTabChecksAsOneTypes()
    {
        const QTemporaryDir profile;
        Session session(profile.path().toStdString(), "/nonexistent/sealtrain-control");
        NewJobPanel panel(session);
        panel.show();
        auto* editor = child<QPlainTextEdit>(panel, "newJobSpec");
        auto* submit = child<QPushButton>(panel, "submitButton");
        auto* problems = child<QListWidget>(panel, "specProblems");
        auto* status = child<QLabel>(panel, "specCheckStatus");
        QVERIFY(!submit->isEnabled());  // nothing typed

        // Typing a broken spec: the problems appear once typing pauses, Submit stays off.
        // On one line: QTest types printable characters only.
        QString spec = QString::fromStdString(
            nlohmann::json::parse(readExample("fortunes-small.json").toStdString()).dump());
        spec.replace("\"steps\"", "\"stepz\"");
        editor->setFocus();
        QTest::keyClicks(editor, spec);
        QTRY_VERIFY_WITH_TIMEOUT(problems->isVisible(), 5000);
        QStringList shown;
        for (int row = 0; row < problems->count(); ++row)
            shown << problems->item(row)->text();
        QVERIFY2(shown.contains("schedule.steps is required"), qPrintable(shown.join("; ")));
        QVERIFY2(shown.contains("schedule.stepz is not a field of a version 1 job spec"),
                 qPrintable(shown.join("; ")));
        QVERIFY(status->text().contains("2 problems"));
        QVERIFY(!submit->isEnabled());

        // Fixed: accepted, Submit on.
        editor->setPlainText(readExample("fortunes-small.json"));
        QTRY_VERIFY_WITH_TIMEOUT(!problems->isVisible(), 5000);
        QVERIFY(status->text().contains("accepts"));
        QVERIFY(submit->isEnabled());

        // Pasted and submitted before the check ran: the click checks first and sends nothing.
        editor->setPlainText("spec_version: 1\nname: x\n");
        QVERIFY(submit->isEnabled());
        QTest::mouseClick(submit, Qt::LeftButton);
        QVERIFY(problems->isVisible());
        QVERIFY(!submit->isEnabled());
        QVERIFY(status->text().contains("problems"));
    }
};

QTEST_MAIN(TestGuiSpecCheck)
#include "test_gui_spec_check.moc"
