package timezone

// legacyIndex is Microsoft's "Time Zone Index Values" table: the numbers the
// vSphere API's CustomizationGuiUnattended.TimeZone (sysprep's old
// GuiUnattended TimeZone) takes, and that windows_node and windows_node_pool
// took as time_zone before it became an ID. Each number maps to the ID of the
// registry key the table's name denotes: the table spells some names as the
// Windows Embedded documentation did ("U.S. Mountain", "A.U.S. Eastern",
// "Fiji Islands", "Transitional Islamic State of Afghanistan", "Mexico
// Standard Time 2"), not as the registry keys are named.
//
// Source: "Microsoft Time Zone Index Values",
// https://learn.microsoft.com/en-us/previous-versions/windows/embedded/ms912391(v=winembedded.11),
// the table the vSphere provider's windows_options.time_zone documentation
// links to (vmware/terraform-provider-vsphere docs/resources/virtual_machine.md);
// every number below checked against the same table in hexadecimal, Microsoft
// support article 973627 ("Microsoft Time Zone Index Values"). That article's
// later entries (0x80000040 and up, UTC at 0x80000050) do not fit the
// customization's 32-bit signed TimeZone and are left out.
// 075 (Mid-Atlantic Standard Time) is left out: Windows no longer has that
// zone (it is not in CLDR's list, ids.go). The table has no entry for UTC
// nor for any zone added since.
var legacyIndex = map[int]string{
	0:   "Dateline Standard Time",
	1:   "Samoa Standard Time",
	2:   "Hawaiian Standard Time",
	3:   "Alaskan Standard Time",
	4:   "Pacific Standard Time",
	10:  "Mountain Standard Time",
	13:  "Mountain Standard Time (Mexico)", // "Mexico Standard Time 2": Chihuahua, La Paz, Mazatlan
	15:  "US Mountain Standard Time",
	20:  "Central Standard Time",
	25:  "Canada Central Standard Time",
	30:  "Central Standard Time (Mexico)", // "Mexico Standard Time": Guadalajara, Mexico City, Monterrey
	33:  "Central America Standard Time",
	35:  "Eastern Standard Time",
	40:  "US Eastern Standard Time",
	45:  "SA Pacific Standard Time",
	50:  "Atlantic Standard Time",
	55:  "SA Western Standard Time",
	56:  "Pacific SA Standard Time",
	60:  "Newfoundland Standard Time",
	65:  "E. South America Standard Time",
	70:  "SA Eastern Standard Time",
	73:  "Greenland Standard Time",
	80:  "Azores Standard Time",
	83:  "Cape Verde Standard Time",
	85:  "GMT Standard Time",
	90:  "Greenwich Standard Time",
	95:  "Central Europe Standard Time",
	100: "Central European Standard Time",
	105: "Romance Standard Time",
	110: "W. Europe Standard Time",
	113: "W. Central Africa Standard Time",
	115: "E. Europe Standard Time",
	120: "Egypt Standard Time",
	125: "FLE Standard Time",
	130: "GTB Standard Time",
	135: "Israel Standard Time",
	140: "South Africa Standard Time",
	145: "Russian Standard Time",
	150: "Arab Standard Time",
	155: "E. Africa Standard Time",
	158: "Arabic Standard Time",
	160: "Iran Standard Time",
	165: "Arabian Standard Time",
	170: "Caucasus Standard Time",
	175: "Afghanistan Standard Time",
	180: "Ekaterinburg Standard Time",
	185: "West Asia Standard Time",
	190: "India Standard Time",
	193: "Nepal Standard Time",
	195: "Central Asia Standard Time",
	200: "Sri Lanka Standard Time",
	201: "N. Central Asia Standard Time",
	203: "Myanmar Standard Time",
	205: "SE Asia Standard Time",
	207: "North Asia Standard Time",
	210: "China Standard Time",
	215: "Singapore Standard Time",
	220: "Taipei Standard Time",
	225: "W. Australia Standard Time",
	227: "North Asia East Standard Time",
	230: "Korea Standard Time",
	235: "Tokyo Standard Time",
	240: "Yakutsk Standard Time",
	245: "AUS Central Standard Time",
	250: "Cen. Australia Standard Time",
	255: "AUS Eastern Standard Time",
	260: "E. Australia Standard Time",
	265: "Tasmania Standard Time",
	270: "Vladivostok Standard Time",
	275: "West Pacific Standard Time",
	280: "Central Pacific Standard Time",
	285: "Fiji Standard Time",
	290: "New Zealand Standard Time",
	300: "Tonga Standard Time",
}

// LegacyDefaultIndex is GMT Standard Time, the index windows_node and
// windows_node_pool defaulted to (as the vSphere provider's
// windows_options.time_zone still does).
const LegacyDefaultIndex = 85

// UTCIndex is what a sysprep customization carries for a zone the index
// table lacks (UTC among them): Greenwich Standard Time, UTC+0 without
// daylight saving. The join sets the zone by its ID afterwards.
const UTCIndex = 90

// FromIndex is the ID of a time zone index; ok is false for a number the
// table does not have.
func FromIndex(index int64) (id string, ok bool) {
	if index < 0 || index > 300 {
		return "", false
	}
	id, ok = legacyIndex[int(index)]
	return id, ok
}

// Index is the index of a time zone ID for a sysprep customization; ok is
// false when the table has none for it (UTC, and every zone added since).
func Index(id string) (index int32, ok bool) {
	canon, known := Canonical(id)
	if !known {
		return 0, false
	}
	for i, name := range legacyIndex {
		if name == canon {
			return int32(i), true
		}
	}
	return 0, false
}
