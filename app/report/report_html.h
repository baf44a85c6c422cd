// The HTML pieces that both PDF reports lay out (audit_report.cpp, compliance_report.cpp).
#pragma once

#include <QString>

#include <string>

namespace sealtrain::report::html {

// Text from the log or the control plane, escaped for QTextDocument's HTML.
inline QString escaped(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

// One row of a two-column table: a heading and its value (HTML already escaped).
inline QString row(const QString& name, const QString& value)
{
    return "<tr><th align=left>" + name + "</th><td>" + value + "</td></tr>";
}

}  // namespace sealtrain::report::html
