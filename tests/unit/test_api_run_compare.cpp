// Comparing runs and exporting histories (api/run_compare.h; docs/formats/run-metrics.md): the
// parameters flattened and the differing ones marked; the CSV and JSON exports read back by
// Python's own csv and json modules (nothing of ours), field by field, a name with a comma and a
// quote included, an unvalidated step's val_loss empty or absent.
#include "sealtrain/api/run_compare.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <string>

class TestApiRunCompare : public QObject {
    Q_OBJECT

private slots:
    void parametersFlattenedAndCompared();
    void csvReadsBackWithPython();
    void jsonReadsBackWithPython();
};

using namespace sealtrain;

namespace {

api::RunView run(std::int64_t id, const std::string& name, const std::string& spec)
{
    api::RunView view;
    view.job.id = id;
    view.job.name = name;
    view.job.specJson = spec;
    view.job.state = "succeeded";
    view.attempts.push_back({1, "node-a", 10, 20, "lost", "no heartbeat", 0, 1, 2});
    view.attempts.push_back({2, "node-b", 30, 40, "succeeded", "", 1, 3, 3});
    return view;
}

std::vector<api::RunPointView> history()
{
    return {{1, 1, 4.5, std::nullopt, 0.001, 1.5, 1000.0, 0.125, 1024},
            {2, 1, 4.25, 4.375, 0.002, 1.25, 1100.0, 0.25, 2048},
            {3, 2, 0.1, std::nullopt, 3e-4, 0.75, 1200.5, 0.0, 4096}};
}

// Runs `script` with Debian's python3 on `input` (its standard input); its standard output, or
// fails the test with its error.
QByteArray python(const std::string& script, const std::string& input)
{
    QProcess process;
    process.start("python3", {"-c", QString::fromStdString(script)});
    if (!process.waitForStarted())
        qFatal("python3 does not start");
    process.write(input.data(), static_cast<qint64>(input.size()));
    process.closeWriteChannel();
    process.waitForFinished(30000);
    if (process.exitCode() != 0)
        qFatal("python3 failed: %s", process.readAllStandardError().constData());
    return process.readAllStandardOutput();
}

}  // namespace

void TestApiRunCompare::parametersFlattenedAndCompared()
{
    const auto flat = api::runParameters(
        R"({"name":"a","model":{"layers":2,"heads":4},"optimizer":{"lr":0.001},"tags":[1,2]})");
    QCOMPARE(flat.size(), std::size_t{5});
    QCOMPARE(flat[0].first, std::string("model.heads"));
    QCOMPARE(flat[0].second, std::string("4"));
    QCOMPARE(flat[2].first, std::string("name"));
    QCOMPARE(flat[2].second, std::string("a"));  // a string without its quotes
    QCOMPARE(flat[4].second, std::string("[1,2]"));
    QVERIFY(api::runParameters("not json").empty());

    const auto rows = api::compareParameters(
        {run(1, "a", R"({"model":{"layers":2},"optimizer":{"lr":0.001}})"),
         run(2, "b", R"({"model":{"layers":2},"optimizer":{"lr":0.003},"seed":5})")});
    QCOMPARE(rows.size(), std::size_t{3});
    QCOMPARE(rows[0].name, std::string("model.layers"));
    QVERIFY(!rows[0].differs);
    QCOMPARE(rows[1].name, std::string("optimizer.lr"));
    QVERIFY(rows[1].differs);
    QCOMPARE(rows[1].values, (std::vector<std::string>{"0.001", "0.003"}));
    // A parameter only one run has differs, and the other's value is empty.
    QCOMPARE(rows[2].name, std::string("seed"));
    QVERIFY(rows[2].differs);
    QCOMPARE(rows[2].values, (std::vector<std::string>{"", "5"}));
}

void TestApiRunCompare::csvReadsBackWithPython()
{
    const std::string csv = api::metricsCsv({run(7, "a, \"quoted\" run", "{}"), run(8, "b", "{}")},
                                            {history(), {history()[0]}});
    QVERIFY(csv.find("\r\n") != std::string::npos);
    const QByteArray read = python(R"(
import csv, io, json, sys
rows = list(csv.DictReader(io.StringIO(sys.stdin.read(), newline="")))
print(json.dumps(rows))
)",
                                   csv);
    const auto rows = nlohmann::json::parse(read.toStdString());
    QCOMPARE(rows.size(), std::size_t{4});
    QCOMPARE(rows[0]["run"].get<std::string>(), std::string("7"));
    QCOMPARE(rows[0]["name"].get<std::string>(), std::string("a, \"quoted\" run"));
    QCOMPARE(rows[0]["val_loss"].get<std::string>(), std::string());
    QCOMPARE(rows[1]["val_loss"].get<std::string>(), std::string("4.375"));
    QCOMPARE(rows[2]["attempt"].get<std::string>(), std::string("2"));
    QCOMPARE(std::stod(rows[2]["lr"].get<std::string>()), 3e-4);
    QCOMPARE(std::stod(rows[2]["tokens_per_second"].get<std::string>()), 1200.5);
    QCOMPARE(rows[2]["memory_bytes"].get<std::string>(), std::string("4096"));
    QCOMPARE(rows[3]["run"].get<std::string>(), std::string("8"));
}

void TestApiRunCompare::jsonReadsBackWithPython()
{
    const std::string json = api::metricsJson({run(7, "a", "{}")}, {history()});
    const QByteArray read = python(R"(
import json, sys
document = json.load(sys.stdin)
assert document["format"] == "sealtrain-run-metrics/1"
run = document["runs"][0]
print(json.dumps({"run": run["run"], "outcomes": [a["outcome"] for a in run["attempts"]],
                  "resumed": run["attempts"][1]["resumed_from_step"],
                  "steps": [s["step"] for s in run["steps"]],
                  "attempts": [s["attempt"] for s in run["steps"]],
                  "validated": ["val_loss" in s for s in run["steps"]],
                  "mfu": run["steps"][1]["mfu"]}))
)",
                                   json);
    const auto seen = nlohmann::json::parse(read.toStdString());
    QCOMPARE(seen["run"].get<int>(), 7);
    QCOMPARE(seen["outcomes"], nlohmann::json({"lost", "succeeded"}));
    QCOMPARE(seen["resumed"].get<int>(), 1);
    QCOMPARE(seen["steps"], nlohmann::json({1, 2, 3}));
    QCOMPARE(seen["attempts"], nlohmann::json({1, 1, 2}));
    QCOMPARE(seen["validated"], nlohmann::json({false, true, false}));
    QCOMPARE(seen["mfu"].get<double>(), 0.25);
}

QTEST_GUILESS_MAIN(TestApiRunCompare)
#include "test_api_run_compare.moc"
