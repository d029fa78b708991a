/// RFC 3339 timestamps in UTC, microsecond precision, without Foundation's formatters (a page
/// of a thousand records formats a thousand of them).
enum RFC3339 {
    /// `2026-11-26T09:32:55.123456Z` for microseconds since 1970.
    static func string(microseconds: Int64) -> String {
        let seconds = microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
        let fraction = microseconds - seconds * 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):"
            + "\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// Microseconds since 1970 of an RFC 3339 date-time (`T` or space, optional fraction —
    /// digits beyond microseconds are cut — then `Z` or `±hh:mm`); nil for anything else.
    static func microseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 64 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var value: Int64 = 0
            for i in start..<(start + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int64(b[i] - 48)
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(b[10]),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"), let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(17, 2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var count = 0
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                if count < 6 { fraction = fraction * 10 + Int64(b[index] - 48) }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<6 where count < 6 { fraction *= 10 }
        }
        guard index < b.count else { return nil }
        var offset: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == b.count, let oh = digits(index + 1, 2), b[index + 3] == UInt8(ascii: ":"),
                  let om = digits(index + 4, 2), oh <= 23, om <= 59 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return seconds * 1_000_000 + fraction
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days_from_civil.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Howard Hinnant's civil_from_days.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
