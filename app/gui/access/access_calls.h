// What the tabs of the users-and-roles screen (access_page.h) share: the session, the line under
// the tabs where a call's outcome shows, and the page's reload after a change. One object, owned
// by the page, handed to each tab.
#pragma once

#include "../common/background.h"
#include "../common/colors.h"
#include "../session/session.h"

#include <QLabel>
#include <QObject>
#include <QPushButton>

#include <functional>
#include <utility>

namespace sealtrain::gui {

class AccessCalls final {
public:
    AccessCalls(Session& session, QLabel& status, std::function<void()> reload)
        : session_(session)
        , status_(status)
        , reload_(std::move(reload))
    {
    }

    [[nodiscard]] Session& session() const noexcept { return session_; }
    // A sentence under the tabs (what a call did, or what to choose first).
    void say(const QString& text) const { status_.setText(text); }

    // Runs `work` with the client off the GUI thread for `owner`; a failure's sentence goes under
    // the tabs, a success to `ok`, then the page reads its lists again.
    template <typename Work, typename Ok>
    void call(QObject* owner, Work work, Ok ok) const
    {
        auto client = session_.client();
        if (!client)
            return;
        runInBackground(
            owner, [client, work = std::move(work)]() mutable { return work(*client); },
            [this, ok = std::move(ok)](auto done) mutable {
                if (!done) {
                    status_.setStyleSheet(toneStyle(Tone::Bad));
                    status_.setText(sentence(done.error()));
                    return;
                }
                status_.setStyleSheet({});
                ok(std::move(done));
                reload_();
            });
    }

private:
    Session& session_;
    QLabel& status_;
    std::function<void()> reload_;
};

// A push button with its object name, for the tabs' rows.
[[nodiscard]] inline QPushButton* namedButton(const QString& text, const char* name,
                                              QWidget* parent)
{
    auto* made = new QPushButton(text, parent);
    made->setObjectName(name);
    return made;
}

}  // namespace sealtrain::gui
