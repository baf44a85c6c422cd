// Running the client library's blocking calls off the GUI thread (issue #29: the window never
// stalls): `work` runs on a thread of the pool, and `done` runs afterwards on the thread of
// `receiver` (the GUI thread for a widget) with what `work` returned, unless `receiver` was
// destroyed meanwhile. Every gRPC call of the GUI goes through here.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <memory>
#include <type_traits>
#include <utility>

namespace sealtrain::gui {

// The pool the GUI's calls run on: a few threads, so that one slow call (an upload, a watch)
// does not hold the others back.
QThreadPool& callPool();

template <typename Work, typename Done>
void runInBackground(QObject* receiver, Work work, Done done)
{
    using Value = std::invoke_result_t<Work&>;
    QPointer<QObject> guard(receiver);
    callPool().start([guard, work = std::move(work), done = std::move(done)]() mutable {
        auto value = std::make_shared<Value>(work());
        if (!guard)
            return;
        QMetaObject::invokeMethod(
            guard.data(),
            [guard, value, done = std::move(done)]() mutable {
                if (guard)
                    done(std::move(*value));
            },
            Qt::QueuedConnection);
    });
}

}  // namespace sealtrain::gui
