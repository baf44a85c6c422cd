// Shared formatting of the table models (row_model.h).
#include "row_model.h"

#include <QDateTime>

namespace sealtrain::gui {

QString utcText(std::int64_t unixSeconds)
{
    if (unixSeconds == 0)
        return {};
    return QDateTime::fromSecsSinceEpoch(unixSeconds, Qt::UTC).toString("yyyy-MM-dd HH:mm:ss")
           + " UTC";
}

}  // namespace sealtrain::gui
