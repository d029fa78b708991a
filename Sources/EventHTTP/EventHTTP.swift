import CLibevent
let _libeventVersion = event_get_version_number()
