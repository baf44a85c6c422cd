// Settings text as JSON (structured_text.h): bounded JSON, or YAML walked event by event before
// any node is built.
#include "sealtrain/base/structured_text.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <exception>
#include <optional>
#include <sstream>
#include <string>

namespace sealtrain {
namespace {

using Json = nlohmann::json;

Error fieldError(const StructuredTextRules& rules, const std::string& path, const std::string& what)
{
    return Error(ErrorCode::InvalidArgument, fmt::format("The field '{}' {}; fix the {} ({}).",
                                                         path, what, rules.noun, rules.format));
}

// A YAML scalar as JSON: an integer, a number, true/false, null, or else a string. Quoted
// scalars stay strings.
Json scalarToJson(const YAML::Node& node)
{
    const std::string& text = node.Scalar();
    if (node.Tag() == "!")
        return text;
    if (text == "true" || text == "false")
        return text == "true";
    if (text == "null" || text == "~")
        return nullptr;
    if (!text.empty()) {
        std::size_t used = 0;
        try {
            const long long integer = std::stoll(text, &used);
            if (used == text.size())
                return integer;
        } catch (const std::exception&) {
        }
        try {
            const double number = std::stod(text, &used);
            if (used == text.size() && std::isfinite(number))
                return number;
        } catch (const std::exception&) {
        }
    }
    return text;
}

Result<Json> yamlToJson(const YAML::Node& node, const std::string& path,
                        const StructuredTextRules& rules)
{
    switch (node.Type()) {
    case YAML::NodeType::Map: {
        Json object = Json::object();
        for (const auto& item : node) {
            if (!item.first.IsScalar())
                return fieldError(rules, path.empty() ? "(top)" : path,
                                  "has a key that is not a name");
            const std::string key = item.first.Scalar();
            std::string inner = path;
            if (!inner.empty())
                inner += '.';
            inner += key;
            if (object.contains(key))
                return fieldError(rules, inner, "is given twice");
            auto value = yamlToJson(item.second, inner, rules);
            if (!value)
                return value.error();
            object[key] = std::move(value).value();
        }
        return object;
    }
    case YAML::NodeType::Sequence: {
        Json array = Json::array();
        for (const auto& item : node) {
            auto value = yamlToJson(item, path, rules);
            if (!value)
                return value.error();
            array.push_back(std::move(value).value());
        }
        return array;
    }
    case YAML::NodeType::Scalar: return scalarToJson(node);
    case YAML::NodeType::Null: return Json(nullptr);
    case YAML::NodeType::Undefined: break;
    }
    return fieldError(rules, path, "is not a value");
}

Error shapeError(const StructuredTextRules& rules, const std::string& what)
{
    return Error(ErrorCode::InvalidArgument, fmt::format("The {} {}; write plain fields as in {}.",
                                                         rules.noun, what, rules.format));
}

// The shape of a JSON text before it is parsed: nesting depth and the number of values (each
// '{', '[', ',' and ':' outside strings counts one), so that what nlohmann::json builds is bounded.
Result<void> checkJsonShape(std::string_view text, const StructuredTextRules& limits)
{
    std::size_t depth = 0;
    std::size_t nodes = 1;
    bool inString = false;
    bool escaped = false;
    for (const char c : text) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        switch (c) {
        case '"': inString = true; break;
        case '{':
        case '[':
            if (++depth > limits.maxDepth)
                return shapeError(limits,
                                  fmt::format("nests deeper than {} levels", limits.maxDepth));
            ++nodes;
            break;
        case '}':
        case ']':
            if (depth > 0)
                --depth;
            break;
        case ',':
        case ':': ++nodes; break;
        default: break;
        }
        if (nodes > limits.maxNodes)
            return shapeError(limits, fmt::format("holds more than {} values", limits.maxNodes));
    }
    return success();
}

// Walks a YAML text's parser events before any node is built: aliases, anchors and explicit tags
// are refused (an alias is how a few hundred bytes expand into gigabytes, "billion laughs"),
// and depth, node count and documents are capped.
class YamlShapeCheck final : public YAML::EventHandler {
public:
    explicit YamlShapeCheck(const StructuredTextRules& limits)
        : limits_(limits)
    {
    }

    // Thrown to stop the parser at the first refusal; caught in checkYamlShape.
    struct Stop {};

    [[nodiscard]] const std::optional<Error>& refusal() const { return refusal_; }

    void OnDocumentStart(const YAML::Mark& /*mark*/) override
    {
        if (++documents_ > 1)
            refuse("holds more than one YAML document");
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, "", anchor); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override
    {
        refuse(fmt::format("uses a YAML alias (line {})", mark.line + 1));
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& /*value*/) override
    {
        node(mark, tag, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value /*style*/) override
    {
        open(mark, tag, anchor);
    }
    void OnSequenceEnd() override { --depth_; }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value /*style*/) override
    {
        open(mark, tag, anchor);
    }
    void OnMapEnd() override { --depth_; }

private:
    void refuse(const std::string& what)
    {
        refusal_ = shapeError(limits_, what);
        throw Stop{};
    }

    void node(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor)
    {
        if (anchor != YAML::NullAnchor)
            refuse(fmt::format("defines a YAML anchor (line {})", mark.line + 1));
        // "?" is a plain scalar's, "!" a quoted one's; any other tag was written explicitly.
        if (!tag.empty() && tag != "?" && tag != "!")
            refuse(fmt::format("uses a YAML tag (line {})", mark.line + 1));
        if (++nodes_ > limits_.maxNodes)
            refuse(fmt::format("holds more than {} values", limits_.maxNodes));
    }

    void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor)
    {
        node(mark, tag, anchor);
        if (++depth_ > limits_.maxDepth)
            refuse(fmt::format("nests deeper than {} levels", limits_.maxDepth));
    }

    const StructuredTextRules& limits_;
    std::optional<Error> refusal_;
    std::size_t documents_ = 0;
    std::size_t nodes_ = 0;
    std::size_t depth_ = 0;
};

Result<void> checkYamlShape(std::string_view text, const StructuredTextRules& limits)
{
    std::istringstream stream{std::string(text)};
    YamlShapeCheck check(limits);
    try {
        YAML::Parser parser(stream);
        while (parser.HandleNextDocument(check)) {
        }
    } catch (const YamlShapeCheck::Stop&) {
        return *check.refusal();
    } catch (const YAML::Exception& error) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The {} is not valid YAML (line {}, column {}); check its "
                                 "indentation and punctuation.",
                                 limits.noun, error.mark.line + 1, error.mark.column + 1));
    }
    return success();
}

}  // namespace

Result<nlohmann::json> parseStructuredText(std::string_view text, const StructuredTextRules& limits)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{') {
        SEALTRAIN_TRY(checkJsonShape(text, limits));
        auto json = Json::parse(text, nullptr, false);
        if (json.is_discarded())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The {} is not valid JSON; check its brackets, commas and "
                                     "quotes.",
                                     limits.noun));
        return json;
    }
    SEALTRAIN_TRY(checkYamlShape(text, limits));
    try {
        const YAML::Node root = YAML::Load(std::string(text));
        return yamlToJson(root, "", limits);
    } catch (const YAML::Exception& error) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The {} is not valid YAML (line {}, column {}); check its "
                                 "indentation and punctuation.",
                                 limits.noun, error.mark.line + 1, error.mark.column + 1));
    }
}

}  // namespace sealtrain
