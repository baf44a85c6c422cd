// Live charts of a job's metrics (Qt Charts): loss and validation loss by step, and tokens/s and
// MFU by step, fed the trainer's JSON lines as Jobs.WatchJob delivers them (docs/trainer.md,
// "Metrics"). Lines that are not step or validation lines are ignored.
#pragma once

#include <QWidget>

#include <string>

QT_BEGIN_NAMESPACE
class QChart;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace sealtrain::gui {

class MetricsChart final : public QWidget {
    Q_OBJECT

public:
    explicit MetricsChart(QWidget* parent = nullptr);

    void clear();
    // One metrics line (JSON); returns whether it added a point.
    bool addLine(const std::string& json);
    [[nodiscard]] int lossPoints() const;
    [[nodiscard]] int validationPoints() const;
    [[nodiscard]] int throughputPoints() const;

private:
    QLineSeries* loss_;
    QLineSeries* validation_;
    QLineSeries* tokens_;
    QLineSeries* mfu_;
    QValueAxis* lossX_;
    QValueAxis* lossY_;
    QValueAxis* speedX_;
    QValueAxis* tokensY_;
    QValueAxis* mfuY_;
};

}  // namespace sealtrain::gui
