package pwsh

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Numeric casts as Windows PowerShell 5.1's LanguagePrimitives converts
// (github.com/PowerShell/PowerShell,
// src/System.Management.Automation/engine/LanguagePrimitives.cs):
//
//   - a number to another numeric type is ConvertNumeric, .NET's
//     Convert.ChangeType: a double rounds half to even, a value outside the
//     target's range is an OverflowException, reported as
//     InvalidCastIConvertible;
//   - a string is ConvertStringToInteger: the type's TypeConverter (decimal
//     digits, or hex after 0x); a FormatException ("2.5") retries through
//     double (ConvertNumericThroughDouble), an OverflowException is reported
//     with its own message, both as InvalidCastFromStringToInteger;
//   - "" and $null are 0.
//
// The .NET messages are those of System.OverflowException's resources
// (Overflow_Int32, Overflow_Int64, Overflow_Byte).

// intRange is an integer type's range and its OverflowException text.
type intRange struct {
	min, max float64
	overflow string
}

var intTypes = map[string]intRange{
	"System.Int32": {math.MinInt32, math.MaxInt32, "Value was either too large or too small for an Int32."},
	"System.Int64": {math.MinInt64, math.MaxInt64, "Value was either too large or too small for an Int64."},
	"System.Byte":  {0, math.MaxUint8, "Value was either too large or too small for an unsigned byte."},
}

const msgFormat = "Input string was not in a correct format."

// convertNumber is [int], [long], [byte] and [double] of a value.
func convertNumber(v any, full string) (any, *ErrorRecord) {
	switch v.(type) {
	case nil, int, float64, bool, string:
	default:
		return nil, errConvert(v, full, "", "ConvertToFinalInvalidCastException")
	}
	if full == "System.Double" {
		if s, ok := v.(string); ok {
			if strings.TrimSpace(s) == "" {
				return 0.0, nil
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, errConvert(v, full, msgFormat, "InvalidCastFromStringToDoubleOrSingle")
			}
			return f, nil
		}
		n, _ := toNumber(v)
		return toFloat(n), nil
	}
	rng := intTypes[full]
	s, isStr := v.(string)
	if !isStr {
		n, _ := toNumber(v)
		i, rec := numberToInt(n, rng)
		if rec != "" {
			return nil, errConvert(v, full, rec, "InvalidCastIConvertible")
		}
		return i, nil
	}
	if s == "" {
		return 0, nil
	}
	// The TypeConverter: optional sign, decimal digits, or 0x and hex.
	t := strings.TrimSpace(s)
	if i, ok, overflow := parseIntText(t); ok || overflow {
		if overflow || float64(i) < rng.min || float64(i) > rng.max {
			return nil, errConvert(v, full, rng.overflow, "InvalidCastFromStringToInteger")
		}
		return i, nil
	}
	// A FormatException: through double.
	f, err := strconv.ParseFloat(t, 64)
	if err == nil {
		if i, rec := numberToInt(f, rng); rec == "" {
			return i, nil
		}
	}
	return nil, errConvert(v, full, msgFormat, "InvalidCastFromStringToInteger")
}

// toInteger is Convert.ChangeType of an int or double to an integer type:
// the overflow text when it does not fit.
func numberToInt(n any, rng intRange) (int, string) {
	switch n := n.(type) {
	case int:
		if float64(n) < rng.min || float64(n) > rng.max {
			return 0, rng.overflow
		}
		return n, ""
	case float64:
		// Convert.ToInt32(double): rounds half to even, then checks the
		// range (Int64's upper bound is not a double: 2^63 is outside).
		r := math.RoundToEven(n)
		if math.IsNaN(n) || r < rng.min || r > rng.max || (rng.max == math.MaxInt64 && r >= math.MaxInt64) {
			return 0, rng.overflow
		}
		return int(r), ""
	}
	return 0, rng.overflow
}

// parseIntText reads an integer as Int32Converter/Int64Converter do: ok for
// an integer that fits in 64 bits, overflow for digits that do not.
func parseIntText(t string) (i int, ok, overflow bool) {
	if len(t) > 2 && strings.EqualFold(t[:2], "0x") {
		u, err := strconv.ParseUint(t[2:], 16, 64)
		if err != nil {
			return 0, false, isRange(err)
		}
		return int(int64(u)), true, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, false, isRange(err)
	}
	return int(n), true, false
}

func isRange(err error) bool {
	return errors.Is(err, strconv.ErrRange) // *strconv.NumError unwraps to its cause
}
