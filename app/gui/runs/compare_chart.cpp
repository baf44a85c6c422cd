// Runs' curves overlaid (compare_chart.h).
#include "compare_chart.h"

#include "common/colors.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <limits>

namespace sealtrain::gui {
namespace {

// Colours told apart with the common colour-vision deficiencies (Okabe and Ito's palette).
constexpr std::array<QRgb, 7> kColours{0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7,
                                       0x56B4E9, 0xD55E00, 0x000000};

}  // namespace

CompareChart::CompareChart(QWidget* parent)
    : QWidget(parent)
    , chart_(new QChart)
    , x_(new QValueAxis)
    , y_(new QValueAxis)
{
    setObjectName("compareChart");
    themeChart(*chart_);
    chart_->setTitle(tr("Loss by step"));
    x_->setTitleText(tr("step"));
    x_->setLabelFormat("%g");
    y_->setTitleText(tr("loss"));
    y_->setLabelFormat("%g");
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    auto* view = new QChartView(chart_, this);
    view->setObjectName("compareChartView");
    view->setAccessibleName(tr("The chosen runs' loss and validation loss by step"));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view);
}

void CompareChart::showRuns(const std::vector<api::RunView>& runs,
                            const std::vector<std::vector<api::RunPointView>>& histories)
{
    chart_->removeAllSeries();
    double lowest = std::numeric_limits<double>::max();
    double highest = std::numeric_limits<double>::lowest();
    std::int64_t lastStep = 1;
    auto* restarts = new QScatterSeries;
    restarts->setName(tr("restart"));
    restarts->setMarkerSize(11);
    restarts->setColor(Qt::red);
    for (std::size_t i = 0; i < runs.size() && i < histories.size(); ++i) {
        const QColor colour = seriesColour(kColours.at(i % kColours.size()));
        auto* loss = new QLineSeries;
        loss->setName(tr("run %1").arg(runs[i].job.id));
        loss->setColor(colour);
        auto* validation = new QLineSeries;
        validation->setName(tr("run %1 val.").arg(runs[i].job.id));
        QPen dashed(colour);
        dashed.setStyle(Qt::DashLine);
        dashed.setWidth(2);
        validation->setPen(dashed);
        std::int64_t attempt = -1;
        for (const api::RunPointView& point : histories[i]) {
            const auto step = static_cast<double>(point.step);
            loss->append(step, point.loss);
            lowest = std::min(lowest, point.loss);
            highest = std::max(highest, point.loss);
            if (point.validationLoss) {
                validation->append(step, *point.validationLoss);
                lowest = std::min(lowest, *point.validationLoss);
                highest = std::max(highest, *point.validationLoss);
            }
            if (attempt != -1 && point.attempt != attempt)
                restarts->append(step, point.loss);
            attempt = point.attempt;
            lastStep = std::max(lastStep, point.step);
        }
        for (QLineSeries* series : {loss, validation}) {
            chart_->addSeries(series);
            series->attachAxis(x_);
            series->attachAxis(y_);
        }
    }
    chart_->addSeries(restarts);
    restarts->attachAxis(x_);
    restarts->attachAxis(y_);
    if (lowest > highest) {
        lowest = 0.0;
        highest = 1.0;
    }
    x_->setRange(0, static_cast<double>(lastStep));
    y_->setRange(std::max(0.0, lowest * 0.95), highest * 1.05);
    x_->applyNiceNumbers();
    y_->applyNiceNumbers();
}

int CompareChart::curves() const
{
    int count = 0;
    for (const QAbstractSeries* series : chart_->series())
        count += series->type() == QAbstractSeries::SeriesTypeLine ? 1 : 0;
    return count;
}

int CompareChart::points() const
{
    int count = 0;
    for (QAbstractSeries* series : chart_->series())
        if (series->type() == QAbstractSeries::SeriesTypeLine)
            count += static_cast<int>(qobject_cast<QXYSeries*>(series)->count());
    return count;
}

int CompareChart::restartMarkers() const
{
    for (QAbstractSeries* series : chart_->series())
        if (series->type() == QAbstractSeries::SeriesTypeScatter)
            return static_cast<int>(qobject_cast<QXYSeries*>(series)->count());
    return 0;
}

}  // namespace sealtrain::gui
