package winsim

import (
	"errors"
	"fmt"

	tomlv1 "github.com/pelletier/go-toml"
	tomlv2 "github.com/pelletier/go-toml/v2"
)

// parseContainerdTOML judges a config.toml's bytes with the TOML library the
// real containerd reads it with, and returns its error as containerd prints
// it:
//
//   - containerd 1.7 (services/server/config/config.go, LoadConfig):
//     toml.LoadFile of github.com/pelletier/go-toml v1.9.5 (containerd 1.7's
//     go.mod), wrapped "failed to load TOML: <path>: <err>". LoadBytes drops a
//     UTF-8, UTF-16 or UTF-32 byte order mark (go-toml toml.go, LoadBytes),
//     then lexes UTF-8: a UTF-16 file fails on its NUL bytes ("keys cannot
//     contain \x00 character"), a UTF-8 BOM is accepted.
//   - containerd 2.x (cmd/containerd/server/config/config.go,
//     loadConfigFile): toml.NewDecoder(f).Decode of
//     github.com/pelletier/go-toml/v2, wrapped "failed to unmarshal TOML at row
//     R column C: <err>". go-toml v2 drops no byte order mark: a UTF-8 BOM is
//     "toml: invalid character at start of key: U+00EF 'ï'", UTF-16LE
//     "... U+00FF 'ÿ'".
//
// It returns the bytes the rest of the loader reads (v1 without its BOM).
func parseContainerdTOML(major int, path string, data []byte) ([]byte, error) {
	if major < 2 {
		if _, err := tomlv1.LoadBytes(data); err != nil {
			return nil, fmt.Errorf("failed to load TOML: %s: %w", path, err)
		}
		for _, bom := range [][]byte{{0x00, 0x00, 0xFE, 0xFF}, {0xFF, 0xFE, 0x00, 0x00}, {0xEF, 0xBB, 0xBF}, {0xFE, 0xFF}, {0xFF, 0xFE}} {
			if len(data) >= len(bom) && string(data[:len(bom)]) == string(bom) {
				return data[len(bom):], nil
			}
		}
		return data, nil
	}
	var raw map[string]any
	if err := tomlv2.Unmarshal(data, &raw); err != nil {
		var derr *tomlv2.DecodeError
		if errors.As(err, &derr) {
			row, column := derr.Position()
			return nil, fmt.Errorf("failed to unmarshal TOML at row %d column %d: %w", row, column, err)
		}
		return nil, fmt.Errorf("failed to unmarshal TOML: %w", err)
	}
	return data, nil
}
