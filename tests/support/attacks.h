// The inputs of attacks that both a test and a benchmark perform (issue #27), written once.
#pragma once

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstdint>
#include <string>

namespace sealtrain::testing {

// A "billion laughs" YAML document: six levels of nine aliases, 531,441 values once expanded
// (each level more multiplies by nine). A parser that expands aliases spends seconds and
// hundreds of MiB on its 400 bytes; the job spec reader refuses its first anchor.
inline std::string billionLaughs()
{
    std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (int level = 1; level <= 6; ++level) {
        text += fmt::format("a{}: &a{} [", level, level);
        for (int i = 0; i < 9; ++i)
            text += fmt::format("{}*a{}", i == 0 ? "" : ", ", level - 1);
        text += "]\n";
    }
    return text;
}

// Sets every field of `message`, recursively (to depth 3), to a value a handler would refuse if it
// judged it before its caller: a path that climbs out, -1, a huge count, true, the last enum
// value; one element in every list. For tests that check the caller comes first (issue #27).
inline void fillHostile(google::protobuf::Message& message, int depth)
{
    using google::protobuf::FieldDescriptor;
    const auto* descriptor = message.GetDescriptor();
    const auto* reflection = message.GetReflection();
    const std::string hostile = "../../../etc/shadow";
    for (int i = 0; i < descriptor->field_count(); ++i) {
        const FieldDescriptor* field = descriptor->field(i);
        const bool repeated = field->is_repeated();
        switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING:
            repeated ? reflection->AddString(&message, field, hostile)
                     : reflection->SetString(&message, field, hostile);
            break;
        case FieldDescriptor::CPPTYPE_INT32:
            repeated ? reflection->AddInt32(&message, field, -1)
                     : reflection->SetInt32(&message, field, -1);
            break;
        case FieldDescriptor::CPPTYPE_INT64:
            repeated ? reflection->AddInt64(&message, field, -1)
                     : reflection->SetInt64(&message, field, -1);
            break;
        case FieldDescriptor::CPPTYPE_UINT32:
            repeated ? reflection->AddUInt32(&message, field, 0xffffffffU)
                     : reflection->SetUInt32(&message, field, 0xffffffffU);
            break;
        case FieldDescriptor::CPPTYPE_UINT64:
            repeated ? reflection->AddUInt64(&message, field, std::uint64_t{1} << 62U)
                     : reflection->SetUInt64(&message, field, std::uint64_t{1} << 62U);
            break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
            repeated ? reflection->AddDouble(&message, field, -1.0)
                     : reflection->SetDouble(&message, field, -1.0);
            break;
        case FieldDescriptor::CPPTYPE_FLOAT:
            repeated ? reflection->AddFloat(&message, field, -1.0F)
                     : reflection->SetFloat(&message, field, -1.0F);
            break;
        case FieldDescriptor::CPPTYPE_BOOL:
            repeated ? reflection->AddBool(&message, field, true)
                     : reflection->SetBool(&message, field, true);
            break;
        case FieldDescriptor::CPPTYPE_ENUM: {
            const auto* last = field->enum_type()->value(field->enum_type()->value_count() - 1);
            repeated ? reflection->AddEnum(&message, field, last)
                     : reflection->SetEnum(&message, field, last);
            break;
        }
        case FieldDescriptor::CPPTYPE_MESSAGE:
            if (depth < 3)
                fillHostile(repeated ? *reflection->AddMessage(&message, field)
                                     : *reflection->MutableMessage(&message, field),
                            depth + 1);
            break;
        }
    }
}

}  // namespace sealtrain::testing
