import Foundation

/// HTTP dates (RFC 9110 §5.6.7) as sent in `Last-Modified` and `If-Modified-Since`: the
/// IMF-fixdate form `Sun, 06 Nov 1994 08:49:37 GMT` (the only one a server generates; obsolete
/// forms are not honoured, so such a condition is ignored, as the RFC allows).
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970, or nil for anything that is not an IMF-fixdate.
    static func seconds(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), parts[1].count == 2, let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), parts[3].count == 4 else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        return Int(timegm(&fields))
    }
}
