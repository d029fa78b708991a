/// A stream recorded from `curl -N /events?topics=preferences,things` against a real `tidings`
/// (`--heartbeat 1`): the snapshot, five changes (one PUT with a line break and non-ASCII in
/// the value, a POST, a PATCH of two keys, a DELETE) and heartbeat comments.
enum RecordedStream {
    static let text = #"""
retry: 3000

id: 0
event: preference
data: {"key":"should_show_hello_world","revision":0,"value":false}

id: 0
event: preference
data: {"key":"onboardingCompleted","revision":0,"value":false}

id: 0
event: preference
data: {"key":"promptedForProVersion","revision":0,"value":false}

id: 0
event: preference
data: {"key":"name","revision":0,"value":"fat"}

id: 0
event: preference
data: {"key":"age","revision":0,"value":5}

id: 0
event: preference
data: {"key":"readyForAction","revision":0,"value":false}

id: 0
event: preference
data: {"key":"speed","revision":0,"value":0}

id: 0
event: preference
data: {"key":"numberOfItems","revision":0,"value":0}

id: 0
event: things
data: {"revision":0,"things":[]}

id: 1
event: preference
data: {"key":"name","revision":1,"value":"line\nbreak ünïcödé"}

id: 2
event: preference
data: {"key":"age","revision":2,"value":7}

id: 3
event: things
data: {"change":{"op":"add","thing":"YOLO"},"revision":3,"things":["YOLO"]}

id: 4
event: preference
data: {"key":"readyForAction","revision":4,"value":true}

id: 5
event: preference
data: {"key":"speed","revision":5,"value":2.5}

id: 6
event: things
data: {"change":{"op":"remove","thing":"YOLO"},"revision":6,"things":[]}

: keep-alive

: keep-alive

: keep-alive

: keep-alive

"""#
}
